// The connections of one pool: how many are in each state, the idle stack, which slots are
// held, and closing a connection with a reason. Every state change here goes through transition().
import { errorMessage } from '@dbproxy/util';
import type { PoolCounters } from './pool-counters';
import { type ConnectionState, type PooledConnection, type Slot, transition } from './pooled-connection';
import type { ConnectionFactory } from './types';

export interface IdleSweep {
  now: number;
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  minIdle: number;
}

export class ConnectionRoster<C> {
  /** Every connection not yet closed, creating ones included. */
  readonly all = new Set<PooledConnection<C>>();
  /** Idle connections; the top (end) was used last, the bottom has been idle longest. */
  readonly idle: PooledConnection<C>[] = [];
  /** Connections in the states that idle.length and the slot counts do not already tell. */
  creating = 0;
  resetting = 0;
  retiring = 0;
  busyOrdinary = 0;
  busyReserved = 0;
  /** factory.destroy promises not settled yet: those connections may still be open server-side. */
  pendingDestroys = 0;

  constructor(
    private readonly counters: PoolCounters,
    /** Called when a pending destroy settles (capacity came back). */
    private readonly onDestroySettled: () => void,
    /** Longest a pending destroy keeps counting against capacity. */
    private readonly destroyWaitMs: () => number,
    /** Called after a connection is closed (its destroy may still be pending). */
    private readonly onClosed: () => void = () => undefined,
  ) {}

  /** Connections that count against the bound: open, connecting, or still closing. */
  get footprint(): number {
    return this.all.size + this.pendingDestroys;
  }

  /** Slots held: connections lent out, being reset, or retiring. */
  get busy(): number {
    return this.busyOrdinary + this.busyReserved;
  }

  enroll(conn: PooledConnection<C>): void {
    this.all.add(conn);
    this.creating++;
  }

  /** Moves a connection between live states, keeping the counts and freeing its slot when it goes idle. */
  move(conn: PooledConnection<C>, from: ConnectionState, to: ConnectionState, reason: string): void {
    transition(conn, from, to, reason);
    this.count(from, -1);
    this.count(to, 1);
    if (to === 'idle' || to === 'closed') this.vacate(conn);
  }

  /** idle → in_use, holding `slot`. The caller has taken it off the idle stack. */
  lend(conn: PooledConnection<C>, slot: Slot): void {
    this.move(conn, 'idle', 'in_use', 'acquire');
    conn.slot = slot;
    if (slot === 'reserved') this.busyReserved++;
    else this.busyOrdinary++;
  }

  /** Puts a connection on top of the idle stack. */
  park(conn: PooledConnection<C>, from: ConnectionState, reason: string, now: number): void {
    this.move(conn, from, 'idle', reason);
    conn.idleSince = now;
    this.idle.push(conn);
  }

  /**
   * Closes a connection with a reason and destroys it through the factory that made it. An idle
   * connection must already be off the idle stack.
   */
  close(conn: PooledConnection<C>, from: ConnectionState, reason: string): void {
    this.move(conn, from, 'closed', reason);
    this.all.delete(conn);
    conn.lease = undefined;
    const raw = conn.raw;
    if (raw !== undefined) {
      this.counters.countDestroy(reason);
      this.destroy(conn.factory, raw, reason);
    }
    this.onClosed();
  }

  /** Destroys a connection the pool no longer tracks (one that arrived after its create timed out). */
  destroy(factory: ConnectionFactory<C>, raw: C, reason: string): void {
    let settled: void | Promise<void>;
    try {
      settled = factory.destroy(raw, reason);
    } catch (err) {
      this.counters.publish('destroy-failed', undefined, errorMessage(err));
      return;
    }
    if (settled !== undefined) this.awaitDestroy(Promise.resolve(settled));
  }

  private awaitDestroy(settled: Promise<void>): void {
    this.pendingDestroys++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.pendingDestroys--;
      this.onDestroySettled();
    };
    const timer = setTimeout(finish, this.destroyWaitMs());
    timer.unref();
    settled.then(finish, (err: unknown) => {
      this.counters.publish('destroy-failed', undefined, errorMessage(err));
      finish();
    });
  }

  /** Whether the factory still believes in the connection; a throwing check counts as dead. */
  alive(conn: PooledConnection<C>): boolean {
    const check = conn.factory.isAlive;
    if (check === undefined || conn.raw === undefined) return true;
    try {
      return check.call(conn.factory, conn.raw) === true;
    } catch {
      return false;
    }
  }

  closeAllIdle(reason: string): void {
    const all = this.idle.splice(0);
    for (const conn of all) this.close(conn, 'idle', reason);
  }

  /** Closes the longest-idle connections while more than `capacity` connections exist. */
  closeSurplusIdle(capacity: number): void {
    const surplus = Math.min(this.footprint - capacity, this.idle.length);
    if (surplus <= 0) return;
    for (const conn of this.idle.splice(0, surplus)) this.close(conn, 'idle', 'surplus');
  }

  /**
   * The maintenance pass over idle connections: closes dead ones and those past their lifetime
   * wherever they are, then the longest-idle past idleTimeoutMs while more than minIdle remain.
   */
  sweepIdle(sweep: IdleSweep): void {
    let kept = 0;
    const expired: [PooledConnection<C>, string][] = [];
    for (const conn of this.idle) {
      const reason = this.idleCloseReason(conn, sweep);
      if (reason === undefined) this.idle[kept++] = conn;
      else expired.push([conn, reason]);
    }
    this.idle.length = kept;
    for (const [conn, reason] of expired) this.close(conn, 'idle', reason);
    if (sweep.idleTimeoutMs <= 0) return;
    let stale = 0;
    while (stale < this.idle.length - sweep.minIdle && sweep.now - this.idle[stale].idleSince >= sweep.idleTimeoutMs) stale++;
    for (const conn of this.idle.splice(0, stale)) this.close(conn, 'idle', 'idle-timeout');
  }

  /** Closes connections whose reset has run longer than `timeoutMs`, counting reset failures. */
  closeStuckResets(now: number, timeoutMs: number): void {
    if (this.resetting === 0 && this.retiring === 0) return;
    for (const conn of this.all) {
      if (conn.resetStartedAt === undefined || now - conn.resetStartedAt < timeoutMs) continue;
      if (conn.state !== 'resetting' && conn.state !== 'retiring') continue;
      conn.resetStartedAt = undefined;
      this.counters.resetFailures++;
      this.counters.publish('reset-failed', undefined, 'timeout');
      this.close(conn, conn.state, 'reset-timeout');
    }
  }

  private idleCloseReason(conn: PooledConnection<C>, sweep: IdleSweep): string | undefined {
    if (!this.alive(conn)) return 'dead';
    if (sweep.maxLifetimeMs > 0 && sweep.now - conn.createdAt >= sweep.maxLifetimeMs) return 'max-lifetime';
    return undefined;
  }

  private count(state: ConnectionState, delta: number): void {
    if (state === 'creating') this.creating += delta;
    else if (state === 'resetting') this.resetting += delta;
    else if (state === 'retiring') this.retiring += delta;
  }

  private vacate(conn: PooledConnection<C>): void {
    if (conn.slot === 'reserved') this.busyReserved--;
    else if (conn.slot === 'ordinary') this.busyOrdinary--;
    conn.slot = undefined;
  }
}
