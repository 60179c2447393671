// Versioned JSON envelope `{ v, ...payload }`: encoding validates what we send, decoding
// classifies why a received message is unusable.
import type { z } from 'zod';
import type { DropReason } from '../diagnostics';
import { BusErrors } from '../errors';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export interface Schema<S extends z.ZodTypeAny> {
  readonly name: string;
  readonly version: number;
  readonly schema: S;
}

export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: DropReason; readonly detail: string };

/** Validates `payload` against its schema and returns the JSON envelope; throws DBP_ERR_BUS_INVALID_PAYLOAD. */
export function encodeMessage<S extends z.ZodTypeAny>(spec: Schema<S>, payload: z.input<S>): Uint8Array {
  const parsed = spec.schema.safeParse(payload);
  if (!parsed.success) throw BusErrors.invalidPayload(spec.name, describeIssues(parsed.error));
  return encoder.encode(JSON.stringify({ v: spec.version, ...(parsed.data as object) }));
}

/** Parses and validates a received envelope; never throws. */
export function decodeMessage<S extends z.ZodTypeAny>(spec: Schema<S>, data: Uint8Array): Decoded<z.output<S>> {
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(data));
  } catch (err) {
    return { ok: false, reason: 'malformed-json', detail: err instanceof Error ? err.message : 'not JSON' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'malformed-json', detail: 'not a JSON object' };
  const version = (body as { v?: unknown }).v;
  if (version !== spec.version) return { ok: false, reason: 'unsupported-version', detail: `${spec.name}: got v=${String(version)}, expected ${spec.version}` };
  const parsed = spec.schema.safeParse(body);
  if (!parsed.success) return { ok: false, reason: 'schema-mismatch', detail: `${spec.name}: ${describeIssues(parsed.error)}` };
  return { ok: true, value: parsed.data as z.output<S> };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}
