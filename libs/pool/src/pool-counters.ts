// A pool's monotonic counters and its pool events on Channels.poolEvent.
import { channel } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';
import { WaitSample } from './wait-sample';

/** Events published on Channels.poolEvent as { pool, event, waitMs?, reason? }. */
export type PoolEventName =
  | 'acquire'
  | 'acquire-timeout'
  | 'acquire-aborted'
  | 'queue-full'
  | 'create-failed'
  | 'reset-failed'
  | 'destroy-failed'
  | 'retire'
  | 'drain';

export interface PoolEvent {
  pool: string;
  event: PoolEventName;
  waitMs?: number;
  reason?: string;
}

const poolEvents = channel(Channels.poolEvent);

/** Distinct close reasons kept apart in stats; more than this are counted under `other`. */
export const MAX_DESTROY_REASONS = 32;

export class PoolCounters {
  checkouts = 0;
  acquireTimeouts = 0;
  acquireAborts = 0;
  waitersRejected = 0;
  resetFailures = 0;
  creates = 0;
  createFailures = 0;
  /** Connections reset on release (the reset started). */
  resets = 0;
  /** Recent acquire waits (GET /pools quantiles). */
  readonly waits = new WaitSample();
  private readonly destroys = new Map<string, number>();

  constructor(private readonly pool: string) {}

  countDestroy(reason: string): void {
    const key = this.destroys.has(reason) || this.destroys.size < MAX_DESTROY_REASONS ? reason : 'other';
    this.destroys.set(key, (this.destroys.get(key) ?? 0) + 1);
  }

  destroysByReason(): Record<string, number> {
    return Object.fromEntries(this.destroys);
  }

  /** Publishes only when someone listens, so the per-query path allocates nothing otherwise. */
  publish(event: PoolEventName, waitMs?: number, reason?: string): void {
    if (!poolEvents.hasSubscribers) return;
    const message: PoolEvent = { pool: this.pool, event };
    if (waitMs !== undefined) message.waitMs = waitMs;
    if (reason !== undefined) message.reason = reason;
    poolEvents.publish(message);
  }
}
