// A bounded pool of connections to one backend: acquire with a deadline and a FIFO of waiters,
// reset on release, reserved capacity, retire-on-release, idle/lifetime sweeps and drain.
import { errorMessage } from '@dbproxy/util';
import { AcquireQueue } from './acquire-queue';
import { connectionClock as clock } from './clock';
import { ConnectionRoster } from './connection-roster';
import { PoolErrors } from './errors';
import { PoolLease } from './lease';
import { PoolCounters } from './pool-counters';
import { poolStats } from './pool-stats';
import { checkFactory, resolveSizing, type ResolvedSizing } from './pool-options';
import { PooledConnection, type Slot } from './pooled-connection';
import type { CapacityMember, SharedCapacity } from './shared-capacity';
import type { AcquireOptions, ConnectionFactory, Lease, PoolOptions, PoolSizing, PoolStats, ReleaseOptions } from './types';

type Phase = 'open' | 'draining' | 'closed';

export interface DrainOptions {
  /** How long leases may stay out before their connections are closed under them (default 30 000 ms). */
  deadlineMs?: number;
}

const NO_OPTIONS: AcquireOptions = {};
const DEFAULT_DRAIN_DEADLINE_MS = 30_000;

export class BackendPool<C> {
  readonly backend: string;
  private sizing: ResolvedSizing;
  private factory: ConnectionFactory<C>;
  private readonly counters: PoolCounters;
  private readonly roster: ConnectionRoster<C>;
  private readonly waiters: AcquireQueue<Lease<C>>;
  /** Bumped by retire(): connections still being created for an older generation close on arrival. */
  private generation = 0;
  private retireReason = 'retired';
  private phase: Phase = 'open';
  private sweepTimer: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private drained: Promise<void> | undefined;
  private resolveDrained: () => void = () => {};
  /**
   * The time for connection ages, cached as pgbouncer's get_cached_time() is: refreshed by each
   * sweep and by slow paths (creates) that read the clock anyway, so acquire and release read no
   * clock. Ages are therefore measured to within sweepIntervalMs.
   */
  private now = clock();
  /** The bound shared with sibling pools of the same backend, if any, and this pool's part in it. */
  private readonly shared: SharedCapacity | undefined;
  private readonly member: CapacityMember;
  private freeScheduled = false;

  constructor(options: PoolOptions<C>) {
    if (typeof options.backend !== 'string' || options.backend === '') {
      throw PoolErrors.invalidOptions(String(options.backend), 'backend must be a non-empty string');
    }
    checkFactory(options.backend, options.factory);
    this.backend = options.backend;
    this.sizing = resolveSizing(options.backend, options);
    this.factory = options.factory;
    this.counters = new PoolCounters(this.backend);
    this.waiters = new AcquireQueue(this.backend, this.counters);
    this.roster = new ConnectionRoster(
      this.counters,
      () => {
        this.reconcile();
        this.shared?.freed(this.member);
      },
      () => this.sizing.connectTimeoutMs,
      () => this.closedForShared(),
    );
    const roster = this.roster;
    this.member = {
      get footprint() {
        return roster.footprint;
      },
      get closing() {
        return roster.pendingDestroys;
      },
      yieldIdle: (reason) => this.yieldIdle(reason),
      roomFreed: () => this.dispatch(),
    };
    this.shared = options.shared;
    this.shared?.join(this.member);
    this.startSweep();
    this.ensureMinIdle();
  }

  /** Current sizes and deadlines, defaults filled in. */
  get options(): Readonly<ResolvedSizing> {
    return this.sizing;
  }

  /** max + reserved: the hard bound of connections, open, connecting or closing. */
  get capacity(): number {
    return this.sizing.max + this.sizing.reserved;
  }

  get isOpen(): boolean {
    return this.phase === 'open';
  }

  /**
   * An idle connection now, or undefined (none idle, no free slot, or earlier waiters of the
   * same kind). Synchronous and allocation-light: the per-query fast path.
   */
  tryAcquire(options: AcquireOptions = NO_OPTIONS): Lease<C> | undefined {
    if (this.phase !== 'open') throw PoolErrors.closed(this.backend);
    return this.leaseIdle(this.wantsReserve(options));
  }

  /** A lease, after waiting in FIFO order up to the deadline when nothing is idle. */
  acquire(options: AcquireOptions = NO_OPTIONS): Promise<Lease<C>> {
    if (this.phase !== 'open') return Promise.reject(PoolErrors.closed(this.backend));
    const signal = options.signal;
    if (signal?.aborted) {
      this.counters.acquireAborts++;
      this.counters.publish('acquire-aborted', 0);
      return Promise.reject(PoolErrors.acquireAborted.withCause(signal.reason, this.backend, 0));
    }
    const reserved = this.wantsReserve(options);
    const lease = this.leaseIdle(reserved);
    if (lease !== undefined) return Promise.resolve(lease);
    const timeoutMs = options.timeoutMs ?? this.sizing.acquireTimeoutMs;
    if (!(timeoutMs >= 0 && Number.isFinite(timeoutMs))) {
      return Promise.reject(PoolErrors.invalidOptions(this.backend, `acquire timeoutMs must be a number of ms >= 0, got ${timeoutMs}`));
    }
    const granted = this.waiters.wait(reserved, timeoutMs, signal, this.sizing.maxWaiters);
    this.dispatch();
    return granted;
  }

  /**
   * Gives a lease back. `reusable: false` (timeout, cancel, protocol doubt) closes the connection;
   * otherwise it is reset and reused, unless it is retiring, too old, surplus, or the pool drains.
   */
  release(lease: Lease<C>, options: ReleaseOptions): void {
    if (lease.pool !== this || !(lease instanceof PoolLease)) throw PoolErrors.foreignLease(lease.backend, this.backend);
    if (lease.released) throw PoolErrors.doubleRelease(this.backend, lease.connectionId);
    lease.released = true;
    if (lease.revoked) return;
    const conn = lease.entry;
    conn.lease = undefined;
    const from = conn.state === 'retiring' ? 'retiring' : 'in_use';
    const closeReason = this.closeReasonOnRelease(conn, options);
    if (closeReason !== undefined) {
      this.roster.close(conn, from, closeReason);
      this.reconcile();
      return;
    }
    if (conn.factory.reset === undefined) {
      this.roster.park(conn, 'in_use', 'released', this.now);
      this.dispatch();
      this.offerIdle();
      return;
    }
    this.startReset(conn);
  }

  /**
   * Drain action: every current connection closes when next released (idle ones now); those
   * still being created close on arrival. New connections are made for later demand.
   */
  retire(reason: string): void {
    if (this.phase === 'closed') return;
    this.generation++;
    this.retireReason = reason;
    this.counters.publish('retire', undefined, reason);
    for (const conn of this.roster.all) {
      if (conn.state !== 'in_use' && conn.state !== 'resetting') continue;
      conn.retireReason = reason;
      this.roster.move(conn, conn.state, 'retiring', reason);
    }
    this.roster.closeAllIdle(reason);
    this.reconcile();
  }

  /**
   * Closes every connection now (a backend set offline_hard): idle, connecting, being reset and
   * lent ones, these under their borrowers (their release is then a no-op). The pool stays open:
   * later acquires get new connections.
   */
  closeConnections(reason: string): void {
    if (this.phase === 'closed') return;
    this.retire(reason);
    for (const conn of this.roster.all) {
      if (conn.state !== 'retiring') continue;
      if (conn.lease !== undefined) conn.lease.revoked = true;
      this.roster.close(conn, 'retiring', reason);
    }
    this.reconcile();
  }

  /**
   * New sizes and deadlines (a new config epoch); omitted fields take their defaults. Shrinking
   * closes surplus idle connections now and surplus lent ones when released.
   */
  configure(sizing: PoolSizing): void {
    const next = resolveSizing(this.backend, sizing);
    const sweepChanged = next.sweepIntervalMs !== this.sizing.sweepIntervalMs;
    this.sizing = next;
    if (this.phase !== 'open') return;
    this.roster.closeSurplusIdle(this.capacity);
    if (sweepChanged) this.startSweep();
    this.ensureMinIdle();
    this.dispatch();
  }

  /** Connects through `factory` from now on; the current connections retire with `reason`. */
  replaceFactory(factory: ConnectionFactory<C>, reason: string): void {
    checkFactory(this.backend, factory);
    this.factory = factory;
    this.retire(reason);
  }

  /** Every ordinary slot is taken (lent, or opening for a waiter): an ordinary acquire would wait. */
  get saturated(): boolean {
    return this.roster.busyOrdinary >= this.sizing.max;
  }

  /** Acquires waiting now (pipeline_depth = "auto" decides from it). */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Connections this pool may open (sizing max). */
  get size(): number {
    return this.sizing.max;
  }

  /** No sibling pool shares this pool's bound: nobody but this pool's own callers can be short of its connections. */
  get sharesNoBound(): boolean {
    return this.shared === undefined || this.shared.memberCount <= 1;
  }

  /** (inUse + waiters) / capacity, without building a stats snapshot. */
  pressure(): number {
    return (this.roster.busy + this.waiters.length) / this.capacity;
  }

  stats(): PoolStats {
    return poolStats(this.backend, this.sizing, this.roster, this.waiters.length, this.counters);
  }


  /**
   * Stops new acquires (DBP_ERR_POOL_CLOSED, waiters too), closes idle connections, closes lent
   * ones as they come back, and at the deadline closes the rest under their borrowers.
   * Resolves once every connection is closed. Calling it again returns the same promise.
   */
  drain(options: DrainOptions = {}): Promise<void> {
    if (this.drained !== undefined) return this.drained;
    this.phase = 'draining';
    this.drained = new Promise((resolve) => {
      this.resolveDrained = resolve;
    });
    this.stopSweep();
    this.counters.publish('drain');
    this.waiters.failAll(() => PoolErrors.closed(this.backend));
    this.roster.closeAllIdle('pool-closed');
    const deadlineMs = options.deadlineMs ?? DEFAULT_DRAIN_DEADLINE_MS;
    if (deadlineMs <= 0) this.closeRemaining();
    else this.drainTimer = setTimeout(() => this.closeRemaining(), deadlineMs);
    this.reconcile();
    return this.drained;
  }

  /** drain() with no grace: lent connections are closed under their borrowers at once. */
  close(): Promise<void> {
    return this.drain({ deadlineMs: 0 });
  }

  // --- acquiring -------------------------------------------------------------------------

  private wantsReserve(options: AcquireOptions): boolean {
    return options.reserved === true && this.sizing.reserved > 0;
  }

  /** Reserved acquirers take a reserved slot first, then an ordinary one; others only ordinary. */
  private readonly freeSlot = (reserved: boolean): Slot | undefined => {
    if (reserved && this.roster.busyReserved < this.sizing.reserved) return 'reserved';
    if (this.roster.busyOrdinary < this.sizing.max) return 'ordinary';
    return undefined;
  };

  private leaseIdle(reserved: boolean): Lease<C> | undefined {
    if (this.waiters.lengthOf(reserved) > 0) return undefined;
    const slot = this.freeSlot(reserved);
    if (slot === undefined) return undefined;
    const conn = this.takeUsableIdle();
    return conn === undefined ? undefined : this.lend(conn, slot, 0);
  }

  /** Pops the most recently used idle connection that is alive and not past its lifetime. */
  private takeUsableIdle(): PooledConnection<C> | undefined {
    const maxLifetimeMs = this.sizing.maxLifetimeMs;
    const now = this.now;
    for (let conn = this.roster.idle.pop(); conn !== undefined; conn = this.roster.idle.pop()) {
      if (!this.roster.alive(conn)) this.roster.close(conn, 'idle', 'dead');
      else if (maxLifetimeMs > 0 && now - conn.createdAt >= maxLifetimeMs) this.roster.close(conn, 'idle', 'max-lifetime');
      else return conn;
    }
    return undefined;
  }

  private lend(conn: PooledConnection<C>, slot: Slot, waitMs: number): Lease<C> {
    this.roster.lend(conn, slot);
    const lease = new PoolLease(this, conn, slot === 'reserved', waitMs);
    conn.lease = lease;
    this.counters.checkouts++;
    this.counters.waits.record(waitMs);
    this.counters.publish('acquire', waitMs);
    return lease;
  }

  private freeSlots(): [reserved: number, ordinary: number] {
    return [Math.max(0, this.sizing.reserved - this.roster.busyReserved), Math.max(0, this.sizing.max - this.roster.busyOrdinary)];
  }

  /** Hands idle connections to waiters, then opens connections for the waiters still servable. */
  private dispatch(): void {
    if (this.phase !== 'open') return;
    for (let waiter = this.waiters.nextServable(this.freeSlot); waiter !== undefined; waiter = this.waiters.nextServable(this.freeSlot)) {
      const conn = this.takeUsableIdle();
      if (conn === undefined) break;
      const slot = this.freeSlot(waiter.reserved) as Slot;
      this.waiters.grant(waiter, (waitMs) => this.lend(conn, slot, waitMs));
    }
    let wanted = this.waiters.servable(...this.freeSlots()) - this.roster.creating;
    while (wanted-- > 0 && this.roster.footprint < this.capacity) {
      // the bound shared with sibling pools is reached: one of their idle connections makes room
      // (at once, or when its close has finished: then roomFreed() comes back here)
      if (this.shared !== undefined && !this.shared.hasRoom() && !(this.shared.makeRoom(this.member) && this.shared.hasRoom())) return;
      this.open();
    }
  }

  /** A connection closed: sibling pools sharing the bound may open (once per turn, after the current call chain). */
  private closedForShared(): void {
    if (this.shared === undefined || this.freeScheduled) return;
    this.freeScheduled = true;
    queueMicrotask(() => {
      this.freeScheduled = false;
      this.shared?.freed(this.member);
    });
  }

  /** Closes the longest-idle connection for a sibling pool that needs the room (SharedCapacity). */
  private yieldIdle(reason: string): boolean {
    const conn = this.roster.idle.shift();
    if (conn === undefined) return false;
    this.roster.close(conn, 'idle', reason);
    return true;
  }

  private get sharedOverBound(): boolean {
    return this.shared !== undefined && this.shared.overBound;
  }

  // --- connection lifecycle ----------------------------------------------------------------

  private ensureMinIdle(): void {
    const roster = this.roster;
    while (this.phase === 'open' && roster.idle.length + roster.creating < this.sizing.minIdle && roster.footprint < this.capacity && (this.shared?.hasRoom() ?? true)) {
      this.open();
    }
  }

  /** Starts factory.create under the connect timeout; the result goes to the next waiter or idle. */
  private open(): void {
    const factory = this.factory;
    this.now = clock();
    const conn = new PooledConnection<C>(this.backend, factory, this.generation, this.now);
    this.roster.enroll(conn);
    const connecting = new AbortController();
    conn.connecting = connecting;
    conn.afterReset = () => this.afterReset(conn);
    conn.afterResetFailure = (err: unknown) => this.resetFailed(conn, err);
    const timeoutMs = this.sizing.connectTimeoutMs;
    const timer = setTimeout(() => {
      const err = PoolErrors.connectTimeout(this.backend, timeoutMs);
      connecting.abort(err);
      this.openFailed(conn, err);
    }, timeoutMs);
    let created: Promise<C>;
    try {
      created = factory.create(connecting.signal);
    } catch (err) {
      created = Promise.reject(err);
    }
    created.then(
      (raw) => {
        clearTimeout(timer);
        this.opened(conn, raw);
      },
      (err: unknown) => {
        clearTimeout(timer);
        this.openFailed(conn, err);
      },
    );
  }

  private opened(conn: PooledConnection<C>, raw: C): void {
    conn.connecting = undefined;
    if (conn.state !== 'creating') {
      // It timed out or the pool was closed meanwhile: nobody tracks it any more.
      this.roster.destroy(conn.factory, raw, 'late-connect');
      return;
    }
    conn.raw = raw;
    this.counters.creates++;
    if (this.phase !== 'open') this.roster.close(conn, 'creating', 'pool-closed');
    else if (conn.generation !== this.generation) this.roster.close(conn, 'creating', this.retireReason);
    else this.roster.park(conn, 'creating', 'connected', (this.now = clock()));
    this.reconcile();
    this.offerIdle();
  }

  /** A failed create rejects the oldest servable waiter at once rather than at its deadline. */
  private openFailed(conn: PooledConnection<C>, err: unknown): void {
    if (conn.state !== 'creating') return;
    conn.connecting = undefined;
    this.roster.close(conn, 'creating', 'create-failed');
    this.counters.createFailures++;
    this.counters.publish('create-failed', undefined, errorMessage(err));
    const waiter = this.waiters.nextServable(this.freeSlot);
    if (waiter !== undefined) this.waiters.fail(waiter, PoolErrors.createFailed.withCause(err, this.backend, errorMessage(err)));
    this.reconcile();
  }

  private closeReasonOnRelease(conn: PooledConnection<C>, options: ReleaseOptions): string | undefined {
    if (!options.reusable) return options.reason ?? 'not-reusable';
    if (conn.state === 'retiring') return conn.retireReason;
    if (this.phase !== 'open') return 'pool-closed';
    if (!this.roster.alive(conn)) return 'dead';
    if (this.roster.footprint > this.capacity || this.sharedOverBound) return 'surplus';
    if (this.sizing.maxLifetimeMs > 0 && this.now - conn.createdAt >= this.sizing.maxLifetimeMs) return 'max-lifetime';
    return undefined;
  }

  private startReset(conn: PooledConnection<C>): void {
    this.roster.move(conn, 'in_use', 'resetting', 'released');
    this.counters.resets++;
    conn.resetStartedAt = this.now;
    let reset: Promise<void>;
    try {
      reset = (conn.factory.reset as (c: C) => Promise<void>).call(conn.factory, conn.raw as C);
    } catch (err) {
      reset = Promise.reject(err);
    }
    reset.then(conn.afterReset, conn.afterResetFailure);
  }

  private afterReset(conn: PooledConnection<C>): void {
    conn.resetStartedAt = undefined;
    if (conn.state === 'retiring') this.roster.close(conn, 'retiring', conn.retireReason);
    else if (conn.state !== 'resetting') return; // closed by the reset timeout or a drain deadline
    else if (this.phase !== 'open') this.roster.close(conn, 'resetting', 'pool-closed');
    else if (this.roster.footprint > this.capacity || this.sharedOverBound) this.roster.close(conn, 'resetting', 'surplus');
    else this.roster.park(conn, 'resetting', 'reset', this.now);
    this.reconcile();
    this.offerIdle();
  }

  /** At the shared bound, a connection just went idle here: siblings waiting for room may take its place. */
  private offerIdle(): void {
    if (this.shared !== undefined && this.roster.idle.length > 0 && !this.shared.hasRoom()) this.shared.freed(this.member);
  }

  private resetFailed(conn: PooledConnection<C>, err: unknown): void {
    conn.resetStartedAt = undefined;
    if (conn.state !== 'resetting' && conn.state !== 'retiring') return;
    this.counters.resetFailures++;
    this.counters.publish('reset-failed', undefined, errorMessage(err));
    this.roster.close(conn, conn.state, 'reset-failed');
    this.reconcile();
  }

  /** After capacity or connections changed: serve waiters, or finish a drain. */
  private reconcile(): void {
    if (this.phase === 'open') {
      this.dispatch();
      return;
    }
    if (this.phase === 'draining' && this.roster.all.size === 0 && this.roster.pendingDestroys === 0) {
      this.phase = 'closed';
      this.shared?.leave(this.member);
      clearTimeout(this.drainTimer);
      this.resolveDrained();
    }
  }

  /** The drain deadline: closes what is still lent, resetting or connecting. */
  private closeRemaining(): void {
    for (const conn of this.roster.all) {
      if (conn.state === 'creating') conn.connecting?.abort(PoolErrors.closed(this.backend));
      if (conn.lease !== undefined) conn.lease.revoked = true;
      this.roster.close(conn, conn.state, 'drain-deadline');
    }
    this.reconcile();
  }

  // --- maintenance -------------------------------------------------------------------------

  private startSweep(): void {
    this.stopSweep();
    this.sweepTimer = setInterval(() => this.sweep(), this.sizing.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  private stopSweep(): void {
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  /** The one periodic pass: stuck resets, dead/old/long-idle connections, then minIdle. */
  private sweep(): void {
    const now = (this.now = clock());
    this.roster.closeStuckResets(now, this.sizing.resetTimeoutMs);
    const { idleTimeoutMs, maxLifetimeMs, minIdle } = this.sizing;
    this.roster.sweepIdle({ now, idleTimeoutMs, maxLifetimeMs, minIdle });
    this.ensureMinIdle();
    this.dispatch();
  }

}
