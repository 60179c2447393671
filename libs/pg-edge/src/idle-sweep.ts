// The client read timeout of both modes: sessions waiting for their client are looked at once a
// second and close themselves after proxy.client_read_timeout_seconds of silence (57P05 / 25P03).
import { performance } from 'node:perf_hooks';
import { PgEdgeErrors } from './errors';

export interface IdleWatched {
  /** Called by the sweep; the session closes itself when its client was silent too long while it waited for it. */
  checkIdle(nowMs: number): void;
}

export class IdleSweep {
  private readonly sessions = new Set<IdleWatched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = 1000) {}

  watch(session: IdleWatched): void {
    this.sessions.add(session);
    if (this.timer) return;
    this.timer = setInterval(() => {
      const now = performance.now();
      for (const s of this.sessions) s.checkIdle(now);
    }, this.intervalMs);
    this.timer.unref();
  }

  unwatch(session: IdleWatched): void {
    this.sessions.delete(session);
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.sessions.clear();
  }
}

/** What a client silent for `timeoutMs` gets, worded as PostgreSQL's own timeouts: in a transaction (status T or E) or not. */
export function idleTimeout(inTransaction: boolean, timeoutMs: number): Error {
  const seconds = Math.round(timeoutMs / 1000);
  return inTransaction ? PgEdgeErrors.idleInTransactionTimeout(seconds) : PgEdgeErrors.idleSessionTimeout(seconds);
}
