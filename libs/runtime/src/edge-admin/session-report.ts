// What an edge process reports about its live client sessions and backend pools (GET /sessions,
// GET /pools, the per-instance admin subject), and the snake_case JSON of the HTTP routes.
import { randomBytes } from 'node:crypto';

/** One live client session, read from the session's own fields when a report is asked for. */
export interface SessionSnapshot {
  /** Opaque, URL-safe and unique fleet-wide (see SessionIds). */
  readonly id: string;
  readonly clientAddress: string;
  readonly user: string;
  readonly database: string;
  readonly listener: string;
  /** `login`, `idle`, `running`, `in transaction`, `pinned`, `waiting` (pool), `held` (paused edge). */
  readonly state: string;
  /** Fingerprint of the running (or last) statement or command, never literal values. */
  readonly statement: string | null;
  readonly backend: string | null;
  readonly pinnedReason: string | null;
  readonly epoch: number;
  /** ms since the Unix epoch. */
  readonly startedAt: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** The handshake route that chose the session's shard (null: no routes configured, or not routed yet). */
  readonly route?: string | null;
  /** The shard (cluster) the session runs on. */
  readonly shard?: string | null;
}

export interface WaitQuantiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

/** One backend pool of one process. */
export interface PoolSnapshot {
  readonly backend: string;
  readonly inUse: number;
  readonly idle: number;
  readonly waiters: number;
  readonly checkouts: number;
  readonly timeouts: number;
  readonly resets: number;
  readonly waitMs: WaitQuantiles;
}

/** What an edge process gives the admin interface. */
export interface SessionSource {
  sessions(): SessionSnapshot[];
  pools(): PoolSnapshot[];
  /** Closes the session, the client told `reason` in its protocol; false when it is not here. */
  kill(id: string, reason: string): boolean;
  /** Statements or commands this process ran since it started. */
  statementsTotal(): number;
}

/**
 * Session ids: a random per-process prefix and a counter, so ids of different processes and
 * hosts do not collide; `[a-z0-9-]` only (URL-safe).
 */
export class SessionIds {
  private readonly prefix: string;
  private next = 1;

  constructor(protocolLetter: string) {
    this.prefix = `${protocolLetter}-${randomBytes(6).toString('hex')}-`;
  }

  allocate(): string {
    return this.prefix + (this.next++).toString(36);
  }
}

export function sessionJson(s: SessionSnapshot, now: number): Record<string, unknown> {
  return {
    id: s.id,
    client_address: s.clientAddress,
    user: s.user,
    database: s.database,
    listener: s.listener,
    state: s.state,
    statement: s.statement,
    backend: s.backend,
    pinned_reason: s.pinnedReason,
    epoch: s.epoch,
    age_seconds: Math.max(0, Math.round((now - s.startedAt) / 100) / 10),
    bytes_in: s.bytesIn,
    bytes_out: s.bytesOut,
    route: s.route ?? null,
    shard: s.shard ?? null,
  };
}

export function poolJson(p: PoolSnapshot): Record<string, unknown> {
  return { backend: p.backend, in_use: p.inUse, idle: p.idle, waiters: p.waiters, checkouts: p.checkouts, timeouts: p.timeouts, resets: p.resets, wait_ms: { p50: p.waitMs.p50, p95: p.waitMs.p95, p99: p.waitMs.p99 } };
}

/** The figures of a libs/pool stats snapshot GET /pools shows. */
export function poolSnapshotOf(stats: {
  readonly backend: string;
  readonly inUse: number;
  readonly idle: number;
  readonly waiters: number;
  readonly checkouts: number;
  readonly acquireTimeouts: number;
  readonly resets: number;
  readonly waitMs: WaitQuantiles;
}): PoolSnapshot {
  return { backend: stats.backend, inUse: stats.inUse, idle: stats.idle, waiters: stats.waiters, checkouts: stats.checkouts, timeouts: stats.acquireTimeouts, resets: stats.resets, waitMs: stats.waitMs };
}

/** Pools of several processes for the same backend, summed; quantiles are the worst process's (a bound, not a merge). */
export function mergePools(pools: readonly PoolSnapshot[]): PoolSnapshot[] {
  const byBackend = new Map<string, PoolSnapshot>();
  for (const p of pools) {
    const seen = byBackend.get(p.backend);
    if (!seen) {
      byBackend.set(p.backend, p);
      continue;
    }
    byBackend.set(p.backend, {
      backend: p.backend,
      inUse: seen.inUse + p.inUse,
      idle: seen.idle + p.idle,
      waiters: seen.waiters + p.waiters,
      checkouts: seen.checkouts + p.checkouts,
      timeouts: seen.timeouts + p.timeouts,
      resets: seen.resets + p.resets,
      waitMs: { p50: Math.max(seen.waitMs.p50, p.waitMs.p50), p95: Math.max(seen.waitMs.p95, p.waitMs.p95), p99: Math.max(seen.waitMs.p99, p.waitMs.p99) },
    });
  }
  return [...byBackend.values()].sort((a, b) => a.backend.localeCompare(b.backend));
}
