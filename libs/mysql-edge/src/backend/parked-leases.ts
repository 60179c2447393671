// Clean backend connections a session keeps between its statements. Giving a connection back to
// the pool after every statement and borrowing one again for the next costs a round of pool
// bookkeeping per query; instead a session parks a clean connection (nothing to reset) and reuses
// it when its next statement goes to the same pool. Parking never holds capacity against others:
// a session that finds no idle connection takes a parked one from another session, the deadline
// sweep returns connections parked for over a second, and nothing is parked when the pool is full.
// A connection that must be reset before another client uses it goes back to the pool (which
// resets it) rather than straight to the taker. A connection a drain retired (lease.retiring) is
// never parked nor handed over: parking is this edge's local pool return, and like the pool's own
// idle list it takes no retired connection (spec 001 "Connection Retirement").
import type { BackendPool, Lease } from '@dbproxy/pool';
import type { BackendConnection } from './backend-connection';

export type ConnectionPool = BackendPool<BackendConnection>;

/** A session's side of a parked connection. */
export interface ParkedHolder {
  /** When it was parked (coarse clock ms). */
  readonly parkedAt: number;
  /** Hands the lease over to another session (the holder forgets it). */
  surrender(): Lease<BackendConnection> | null;
  /** Gives the lease back to its pool. */
  giveBack(reason: string): void;
}

const REUSABLE = { reusable: true };

export class ParkedLeases {
  /** Whether a session may keep `lease` between its statements: not once a drain retired it (its release closes it). */
  static mayPark(lease: Lease<BackendConnection>): boolean {
    return !lease.retiring;
  }

  /**
   * Whether `pool` can spare the connection a session parks: it is not full, or it is full (every
   * connection lent: one per active session, e.g. 32 sysbench threads on the default pool of 32)
   * but nobody waits for it and no sibling pool shares its bound. A full pool's sessions that find
   * no idle connection take a parked one (steal), so parking there costs nobody a wait, while
   * returning it made 40 % of such statements go back through the pool.
   */
  static roomToPark(pool: ConnectionPool): boolean {
    return pool.pressure() < 1 || (pool.waiting === 0 && pool.sharesNoBound);
  }

  private readonly byPool = new Map<ConnectionPool, Set<ParkedHolder>>();

  park(pool: ConnectionPool, holder: ParkedHolder): void {
    let holders = this.byPool.get(pool);
    if (holders === undefined) this.byPool.set(pool, (holders = new Set()));
    holders.add(holder);
  }

  unpark(pool: ConnectionPool, holder: ParkedHolder): void {
    this.byPool.get(pool)?.delete(holder);
  }

  /** A connection parked by another session on `pool`, taken over. */
  steal(pool: ConnectionPool, taker: ParkedHolder): Lease<BackendConnection> | undefined {
    const holders = this.byPool.get(pool);
    if (holders === undefined || holders.size === 0) return undefined;
    for (const holder of holders) {
      if (holder === taker) continue;
      holders.delete(holder);
      const lease = holder.surrender();
      if (lease === null || lease.released) continue;
      // retired by a drain after it was parked: its release closes it; nobody else runs on it
      if (lease.retiring) {
        lease.pool.release(lease, REUSABLE);
        continue;
      }
      // what its session left (LAST_INSERT_ID, warnings...) is not the taker's: the pool resets it first
      if (lease.connection.needsReset) {
        lease.pool.release(lease, REUSABLE);
        continue;
      }
      return lease;
    }
    return undefined;
  }

  /** Returns every connection parked on `backend`'s pools (drain actions, DNS pins, new epochs). */
  giveBackAll(backend?: string): void {
    for (const [pool, holders] of this.byPool) {
      if (backend !== undefined && pool.backend !== backend) continue;
      for (const holder of holders) holder.giveBack('retired');
    }
  }

  /** Returns connections parked before `before` to their pools. */
  sweep(before: number): void {
    for (const holders of this.byPool.values()) {
      for (const holder of holders) if (holder.parkedAt < before) holder.giveBack('parked-idle');
    }
  }

  /** Connections parked right now, per pool backend (for metrics). */
  counts(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [pool, holders] of this.byPool) out.set(pool.backend, (out.get(pool.backend) ?? 0) + holders.size);
    return out;
  }
}
