// Reports dropped bus messages on the diagnostics channel libs/observability logs and counts.
import { channel } from 'node:diagnostics_channel';
import { Channels, errorMessage } from '@dbproxy/util';

/** Why a message was dropped. */
export type DropReason =
  | 'malformed-json' // payload is not JSON
  | 'unsupported-version' // `v` missing or not the version this service understands
  | 'schema-mismatch' // JSON of the right version that fails the zod schema
  | 'handler-error' // the subscriber's handler threw or rejected
  | 'publish-failed' // could not be sent (no connection, reconnect buffer full, closed)
  | 'slow-consumer'; // the embedded bus's per-subscription queue bound was reached

/** Payload published on `Channels.busMessageDropped`. */
export interface BusMessageDropped {
  readonly subject: string;
  readonly reason: DropReason;
  readonly detail: string;
}

const dropped = channel(Channels.busMessageDropped);
const counts = new Map<DropReason, number>();
const alreadyReported = new WeakSet<object>();

export function reportDropped(subject: string, reason: DropReason, detail: unknown): void {
  counts.set(reason, (counts.get(reason) ?? 0) + 1);
  if (dropped.hasSubscribers) {
    const event: BusMessageDropped = { subject, reason, detail: typeof detail === 'string' ? detail : errorMessage(detail) };
    dropped.publish(event);
  }
}

/** Messages dropped in this process since start, by reason. */
export function droppedMessageCounts(): Readonly<Record<DropReason, number>> {
  return {
    'malformed-json': counts.get('malformed-json') ?? 0,
    'unsupported-version': counts.get('unsupported-version') ?? 0,
    'schema-mismatch': counts.get('schema-mismatch') ?? 0,
    'handler-error': counts.get('handler-error') ?? 0,
    'publish-failed': counts.get('publish-failed') ?? 0,
    'slow-consumer': counts.get('slow-consumer') ?? 0,
  };
}

/** Marks an error as already reported, so a handler that rethrows it is not counted twice. */
export function markReported<E extends object>(err: E): E {
  alreadyReported.add(err);
  return err;
}

export function wasReported(err: unknown): boolean {
  return typeof err === 'object' && err !== null && alreadyReported.has(err);
}
