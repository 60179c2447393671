// Signing on send and verification on receipt for the typed layer: one place for every signed
// kind, used by publishMessage/subscribeMessages, requestMessage/serveMessages and openRecords.
import type { Bus } from '../types';
import { identitiesOf } from './binding';
import type { ReplayGuard, SignedKind } from './bus-identities';
import { reportRejected } from './rejections';

/** The purpose a reply is signed for: bound to the request it answers. */
export const replyPurpose = (subject: string, requestNonce: string): string => `${subject} reply to ${requestNonce}`;

/** Signs `data` when the kind is signed and the bus has identities; `nonce` identifies the signed message. */
export function sealOutgoing(bus: Bus, signed: SignedKind | undefined, purpose: string, data: Uint8Array, what: string): { data: Uint8Array; nonce?: string } {
  const identities = signed && identitiesOf(bus);
  return identities ? identities.seal(data, signed, purpose, what) : { data };
}

export type Receipt = { readonly ok: true; readonly nonce?: string; readonly atMs?: number } | { readonly ok: false; readonly detail: string };

export interface ReceiptOptions {
  /** Refuse messages signed outside the age window (off for KV records). */
  readonly checkAge: boolean;
  /** Refuse nonces seen before on this subscription. */
  readonly guard?: ReplayGuard;
}

/** Verifies a received signed kind; a refusal is reported (counted and logged) here. */
export function verifyIncoming(bus: Bus, signed: SignedKind | undefined, subject: string, purpose: string, data: Uint8Array, opts: ReceiptOptions): Receipt {
  const identities = signed && identitiesOf(bus);
  if (!identities) return { ok: true };
  const verdict = identities.verify(data, signed, purpose, opts.checkAge);
  if (!verdict.ok) {
    reportRejected({ subject, kind: signed.kind, reason: verdict.reason, detail: verdict.detail });
    return { ok: false, detail: `${verdict.reason}: ${verdict.detail}` };
  }
  if (opts.guard && !opts.guard.firstSight(verdict.nonce, verdict.atMs, identities.maxAgeMs)) {
    reportRejected({ subject, kind: signed.kind, reason: 'replayed', detail: `nonce ${verdict.nonce} seen before` });
    return { ok: false, detail: 'replayed: message seen before' };
  }
  return { ok: true, nonce: verdict.nonce, atMs: verdict.atMs };
}
