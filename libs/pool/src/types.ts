// The pool's public contracts: the connection factory an edge supplies, options, leases, stats.
import type { SharedCapacity } from './shared-capacity';
import type { BackendPool } from './backend-pool';

/**
 * How a pool opens, cleans and closes one protocol's connections. mysql-edge, pg-edge and
 * redis-edge each supply one; the pool never looks inside `C`.
 */
export interface ConnectionFactory<C> {
  /** Opens and authenticates a connection. Give up when `signal` aborts (connect timeout, drain). */
  create(signal: AbortSignal): Promise<C>;
  /**
   * Cleans session state before the connection is reused (COM_RESET_CONNECTION, ROLLBACK +
   * DISCARD ALL...). A rejection closes the connection and counts a reset failure. Absent: a
   * released connection goes straight back to idle.
   */
  reset?(connection: C): Promise<void>;
  /** Closes the connection. Should settle promptly: until it does, the connection counts against the bound. */
  destroy(connection: C, reason: string): void | Promise<void>;
  /**
   * Cheap synchronous check of what the connection already knows (its socket closed, a fatal
   * error arrived). Asked before an idle connection is lent and on each sweep; false or a throw
   * closes it with reason `dead`.
   */
  isAlive?(connection: C): boolean;
}

/** Sizes and deadlines of one backend pool; everything except `factory` can change with configure(). */
export interface PoolSizing {
  /** Hard bound of connections for ordinary acquirers (>= 1). */
  max: number;
  /** Additive capacity only `reserved: true` acquirers may use (default 0: they use `max`). */
  reserved?: number;
  /** Warm idle connections kept open (default 0). */
  minIdle?: number;
  /** Bound of the waiter queue; beyond it acquires are refused at once (default 1000). */
  maxWaiters?: number;
  /** How long an acquire may wait (default 5000 ms). */
  acquireTimeoutMs?: number;
  /** How long factory.create may take (default 5000 ms). */
  connectTimeoutMs?: number;
  /** How long factory.reset may take before the connection is closed (default 5000 ms). */
  resetTimeoutMs?: number;
  /** Close a connection idle this long, keeping minIdle (default 600 000 ms; 0 = never). */
  idleTimeoutMs?: number;
  /** Close a connection this old when it is next idle or released (default 3 600 000 ms; 0 = never). */
  maxLifetimeMs?: number;
  /** Period of the pool's one maintenance timer (default 1000 ms). */
  sweepIntervalMs?: number;
}

export interface PoolOptions<C> extends PoolSizing {
  /** The backend this pool connects to; the pool's name in errors, stats and events. */
  backend: string;
  factory: ConnectionFactory<C>;
  /** A bound this pool shares with other pools of the same backend (on top of its own max + reserved). */
  shared?: SharedCapacity;
}

export interface AcquireOptions {
  /** Aborting (the client went away) removes the waiter; the acquire rejects with DBP_ERR_POOL_ACQUIRE_ABORTED. */
  signal?: AbortSignal;
  /** Use the reserved capacity (BEGIN, non-replayable session state); the normal pool when none is configured. */
  reserved?: boolean;
  /** This acquire's deadline instead of the pool's acquireTimeoutMs. */
  timeoutMs?: number;
}

export interface ReleaseOptions {
  /** false for a timed-out, cancelled or protocol-uncertain connection: it is closed, never reused. */
  reusable: boolean;
  /** Why it is closed (a low-cardinality word: it becomes a stats key); default `not-reusable`. */
  reason?: string;
}

/** One borrowing of one connection. Single use: release it exactly once. */
export interface Lease<C> {
  /** The pool that granted it (release goes there even after the PoolSet replaced the pool). */
  readonly pool: BackendPool<C>;
  readonly backend: string;
  /** Process-wide id of the pooled connection (as in state-transition events). */
  readonly connectionId: number;
  /** The connection; reading it after release throws DBP_ERR_POOL_LEASE_RELEASED. */
  readonly connection: C;
  /** True when it holds one of the reserved slots. */
  readonly reserved: boolean;
  /** How long the acquire waited, in milliseconds (0 when an idle connection was at hand). */
  readonly waitMs: number;
  readonly released: boolean;
  /**
   * Retire-on-release: a drain (retire(), a new factory, closeConnections()) marked the
   * connection unhealthy and not reusable. It serves its current borrower to the end of its
   * ownership and is closed when released, whatever the release asks; a borrower that keeps
   * connections between uses (parked, shared, pinned) must stop offering it to anyone else.
   */
  readonly retiring: boolean;
}

/** A snapshot of one pool, for GET /postgres/backends, Prometheus and replica choice. */
export interface PoolStats {
  backend: string;
  /** Configured bounds: capacity = max + reserved. */
  max: number;
  reserved: number;
  capacity: number;
  /** Open connections: idle + inUse. */
  total: number;
  idle: number;
  /** Connections lent out or being reset after release (both hold a slot). */
  inUse: number;
  /** Of inUse, those holding a reserved slot. */
  reservedInUse: number;
  /** Of inUse, those being reset. */
  resetting: number;
  /** Acquires queued. */
  waiters: number;
  /** factory.create calls in flight. */
  pendingCreates: number;
  /** factory.destroy calls not yet settled (they still count against capacity). */
  pendingDestroys: number;
  /** (inUse + waiters) / capacity. */
  pressure: number;
  /** Counters since the pool was made. */
  checkouts: number;
  acquireTimeouts: number;
  acquireAborts: number;
  waitersRejected: number;
  resetFailures: number;
  creates: number;
  createFailures: number;
  /** Connections reset on release. */
  resets: number;
  /** Acquire wait quantiles in ms over the most recent acquires (WAIT_SAMPLE_SIZE). */
  waitMs: { p50: number; p95: number; p99: number };
  /** Connections closed, by reason (`idle-timeout`, `max-lifetime`, `reset-failed`, caller reasons...). */
  destroys: Record<string, number>;
}
