// The signed envelope: `{ v, ...payload, signed: { by, at, nonce, sig } }`. The signature covers
// a purpose (the subject, KV key, or the request a reply answers), the signer, time, nonce and
// the SHA-256 of the canonical JSON of the body without `signed`, so re-serialization by a
// reader or a relay does not break it and a signature cannot be moved to another subject.
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const SIGNATURE_FIELD = 'signed';
const SIGNATURE_DOMAIN = 'dbproxy-signed/1';

export const SignatureBlock = z.object({
  by: z.string().min(1).max(64),
  at: z.string().datetime({ offset: true }),
  nonce: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  sig: z.string().regex(/^[A-Za-z0-9_-]{86}$/),
});
export type SignatureBlock = z.infer<typeof SignatureBlock>;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** JSON with object keys sorted at every level: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  const sorted = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(sorted);
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(
        Object.keys(node)
          .sort()
          .map((k) => [k, sorted((node as Record<string, unknown>)[k])]),
      );
    }
    return node;
  };
  return JSON.stringify(sorted(value));
}

/** The bytes a signature is made over. */
export function signingInput(purpose: string, block: Omit<SignatureBlock, 'sig'>, body: Record<string, unknown>): Uint8Array {
  const digest = createHash('sha256').update(canonicalJson(body)).digest('hex');
  return encoder.encode([SIGNATURE_DOMAIN, purpose, block.by, block.at, block.nonce, digest].join('\n'));
}

/** Splits a received envelope into its body and signature block (undefined when unsigned or not a JSON object). */
export function splitEnvelope(data: Uint8Array): { body: Record<string, unknown>; signed: unknown } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const { [SIGNATURE_FIELD]: signed, ...body } = parsed as Record<string, unknown>;
  return { body, signed };
}

export function joinEnvelope(body: Record<string, unknown>, block: SignatureBlock): Uint8Array {
  return encoder.encode(JSON.stringify({ ...body, [SIGNATURE_FIELD]: block }));
}
