// Reports signed messages refused because their sender could not be verified, on the
// diagnostics channel libs/observability counts (dbproxy_bus_rejected_total) and logs.
import { channel } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';

/** Why a signed message was refused. */
export type RejectReason =
  | 'unsigned' // no signature although the subject requires one
  | 'wrong-sender' // signed by a service that does not own this subject
  | 'unknown-sender' // no public key configured for the owning service
  | 'bad-signature' // the signature does not verify against the owner's public key
  | 'stale' // signed longer ago than bus.signing.max_age_seconds, or in the future
  | 'replayed'; // a message (nonce) already seen, or a KV record older than the one in force

export const REJECT_REASONS: readonly RejectReason[] = ['unsigned', 'wrong-sender', 'unknown-sender', 'bad-signature', 'stale', 'replayed'];

/** Payload published on `Channels.busMessageRejected`. */
export interface BusMessageRejected {
  readonly subject: string;
  /** The signed message kind: bgd_action, xa_execute, xa_execute_reply, config_epoch. */
  readonly kind: string;
  readonly reason: RejectReason;
  readonly detail: string;
}

const rejected = channel(Channels.busMessageRejected);
const counts = new Map<string, number>();

export function reportRejected(event: BusMessageRejected): void {
  const key = `${event.kind}/${event.reason}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  if (rejected.hasSubscribers) rejected.publish(event);
}

/** Messages refused in this process since start, keyed `kind/reason`. */
export function rejectedMessageCounts(): Readonly<Record<string, number>> {
  return Object.fromEntries(counts);
}
