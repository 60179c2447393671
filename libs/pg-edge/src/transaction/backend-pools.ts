// Transaction mode's pools: one bounded pool per backend (libs/pool), reconfigured per epoch,
// retired when topology drains a backend or pins it to a new address.
import { JoinableLendings, pipelineDepth, pipelineDepthCap, PoolSet, type ConnectionFactory, type JoinableLending, type Lease, type PipelineDepthSetting, type PoolStats } from '@dbproxy/pool';
import { retirementOf, type TopologyView } from '@dbproxy/topology-client';
import type { BackendConfig, BackendLoad } from '../backend-directory';
import { sendCancelRequest } from '../backend-socket';
import { PgEdgeErrors } from '../errors';
import type { EdgeEpoch } from '../edge-context';
import { PgBackendConnection, type BackendConsumer } from './backend-connection';

type PoolLease = Lease<PgBackendConnection>;
/** The release options of every reusable connection (one object, not one per release). */
const REUSABLE = Object.freeze({ reusable: true });

/**
 * One lending of a pooled connection, shared by the units pipelined on it: the pool gets the
 * connection back when the last of them is done (answered, or its answers dropped).
 */
class Lending implements JoinableLending {
  /** Leases not yet released. */
  leases = 1;
  /** Units given up while others were queued: their answers are still being dropped. */
  discarding = 0;
  /** Units run on this lending so far (bounded by pipeline_depth; counted by JoinableLendings). */
  joined = 1;
  /** False once a unit failed on it: it is closed, not reused, when the last unit is done. */
  reusable = true;
  reason: string | undefined;

  constructor(
    readonly poolLease: PoolLease,
    readonly connection: PgBackendConnection,
    /** Whether units may still join (every unit on it is a pipelinable read, none failed). */
    public joinable: boolean,
  ) {}

  /** Units whose answers are still to come on the connection. */
  get queued(): number {
    return this.leases + this.discarding;
  }
}

/** A lent connection a unit can be queued on now: open, not being cancelled, not paused for a slow client, not retired by a drain. */
function usableForJoin(lending: Lending): boolean {
  const conn = lending.connection;
  return conn.alive && !conn.cancelled && !conn.stream.isPaused() && !lending.poolLease.retiring;
}

/** What a session holds for one unit (or for a transaction or pin): the connection and its lending. */
export class PgLease {
  released = false;

  constructor(
    readonly connection: PgBackendConnection,
    readonly backend: string,
    readonly lending: Lending,
  ) {}
}

/**
 * No `reset` here on purpose: most releases need none (an autocommit statement that left nothing
 * behind), and TransactionPools.release runs ROLLBACK + DISCARD ALL itself, before giving the
 * connection back, for those that do; the connection stays lent (in use) while it is cleaned.
 */
class PgConnectionFactory implements ConnectionFactory<PgBackendConnection> {
  constructor(
    private readonly config: BackendConfig,
    private readonly address: () => string,
    private readonly connectTimeoutMs: number,
    private readonly maxMessageSize: number,
    private readonly maxPreparedStatements: number,
  ) {}

  create(signal: AbortSignal): Promise<PgBackendConnection> {
    return PgBackendConnection.open(this.config, this.address(), { timeoutMs: this.connectTimeoutMs, signal, maxMessageSize: this.maxMessageSize, maxPreparedStatements: this.maxPreparedStatements });
  }

  destroy(connection: PgBackendConnection, reason: string): void {
    // offline_hard closes lent connections too: their sessions learn it now, not at their query timeout
    if (reason === 'offline_hard') connection.closeUnder(PgEdgeErrors.backendLost(this.config.name));
    else connection.close(reason);
  }

  isAlive(connection: PgBackendConnection): boolean {
    return connection.alive;
  }
}

export class TransactionPools implements BackendLoad {
  private readonly pools = new PoolSet<PgBackendConnection>({ removedDrainDeadlineMs: 30_000 });
  private backends: readonly BackendConfig[] = [];
  private addresses = new Map<string, string>();
  private readonly resetFailures = new Map<string, number>();
  private resetTimeoutMs = 30_000;
  /** Lendings units may join, per backend (pipeline_depth > 1). */
  private readonly joinable = new JoinableLendings<string, Lending>();

  constructor(private readonly topology: () => TopologyView) {}

  configure(epoch: EdgeEpoch): void {
    const pg = epoch.config.postgres;
    this.backends = epoch.config.postgres_backends;
    this.resetTimeoutMs = pg.query_timeout_seconds * 1000;
    this.pools.configure(
      epoch.epoch,
      this.backends.map((config) => ({
        backend: config.name,
        max: pg.pool_max_per_backend,
        acquireTimeoutMs: pg.pool_acquire_timeout_seconds * 1000,
        connectTimeoutMs: pg.connect_timeout_seconds * 1000,
        factory: new PgConnectionFactory(config, () => this.addressOf(config), pg.connect_timeout_seconds * 1000, pg.max_message_bytes, pg.max_prepared_statements),
        connectionKey: JSON.stringify([config.address, config.username, config.password, config.database, config.tls]),
      })),
    );
  }

  /**
   * Topology changed: pools of backends that started draining, or are now pinned elsewhere, retire
   * their connections (closed as released); those of backends gone offline_hard close them now.
   */
  onTopology(view: TopologyView, previous: TopologyView): void {
    for (const config of this.backends) {
      const state = view.backend(config.name);
      const address = state?.connectAddress ?? config.address;
      const before = this.addresses.get(config.name);
      this.addresses.set(config.name, address);
      const pool = this.pools.get(config.name);
      if (!pool || !state) continue;
      const retirement = retirementOf(state, previous.backend(config.name));
      if (retirement?.now) pool.closeConnections(retirement.reason);
      else if (retirement) pool.retire(retirement.reason);
      else if (before !== undefined && before !== address) pool.retire('address-changed');
    }
  }

  /**
   * An idle connection now, or undefined (synchronous: the per-query fast path). Throws when the
   * pool is closed. `joinable`: pipelinable units may queue behind this one.
   */
  tryAcquire(backend: string, reserved: boolean, joinable = false): PgLease | undefined {
    const pool = this.pools.get(backend);
    const lease = pool?.isOpen ? pool.tryAcquire({ reserved }) : undefined;
    return lease && this.lend(lease, joinable);
  }

  /** Waits for a connection up to pool_acquire_timeout_seconds (a session that leaves meanwhile gives it straight back). */
  acquire(backend: string, reserved: boolean, joinable = false): Promise<PgLease> {
    return this.pools.acquire(backend, { reserved }).then((lease) => this.lend(lease, joinable));
  }

  /**
   * A place behind the units running on a lent connection, when every connection of the backend
   * is lent: the one with the fewest queued whose lending has run fewer than the depth `setting`
   * gives now (pipelineDepth: "auto" follows the pool's waiters, 1 while none wait), so that it
   * goes back to the pool (and its waiters) after at most that many.
   */
  tryJoin(backend: string, setting: PipelineDepthSetting): PgLease | undefined {
    const pool = this.pools.get(backend);
    if (!pool?.saturated) return undefined;
    const depth = pipelineDepth(setting, pool);
    if (depth <= 1) return undefined;
    const cap = pipelineDepthCap(setting);
    const best = this.joinable.join(backend, depth, usableForJoin, cap);
    if (best === undefined) return undefined;
    best.leases++;
    if (best.joined >= cap) this.closeJoining(best);
    return new PgLease(best.connection, backend, best);
  }

  /** The session keeps the connection beyond its unit (transaction or pin): nobody joins it any more. */
  hold(lease: PgLease): void {
    this.closeJoining(lease.lending);
  }

  /**
   * Gives a connection back: reset first when it may carry state; closed when it cannot be
   * trusted. `reusable` false means the unit may still be running: when other units are queued
   * behind it, its answers are dropped and the connection is closed after the last of them.
   */
  release(lease: PgLease, reusable: boolean, reason?: string, consumer?: BackendConsumer): void {
    if (lease.released) return;
    lease.released = true;
    const lending = lease.lending;
    const conn = lease.connection;
    lending.leases--;
    if (!reusable) {
      lending.reusable = false;
      lending.reason ??= reason ?? (conn.cancelled ? 'cancelled' : 'not-reusable');
      this.closeJoining(lending);
      if (consumer && lending.leases > 0 && conn.alive && conn.abandon(consumer, () => this.discarded(lending))) lending.discarding++;
      else if (consumer) conn.detach(consumer);
    } else if (consumer) conn.detach(consumer);
    if (lending.leases === 0) this.giveBack(lending);
  }

  /** A given-up unit's answers were all dropped (or the connection was lost). */
  private discarded(lending: Lending): void {
    lending.discarding--;
    if (lending.leases === 0 && lending.discarding === 0 && !lending.poolLease.released) this.giveBack(lending);
  }

  private giveBack(lending: Lending): void {
    this.closeJoining(lending);
    const poolLease = lending.poolLease;
    if (poolLease.released) return;
    const conn = lending.connection;
    // Nobody waits for the answers still being dropped: the connection closes under them, and what
    // may still run there is cancelled (no unit can follow on a connection being closed).
    const ok = lending.reusable && lending.discarding === 0 && conn.alive && !conn.cancelled;
    if (lending.discarding > 0 && conn.alive && !conn.cancelled) {
      conn.cancelled = true;
      void sendCancelRequest(conn.address, conn.processId, conn.secretKey);
    }
    if (!ok) return poolLease.pool.release(poolLease, { reusable: false, reason: lending.reason ?? (conn.cancelled ? 'cancelled' : 'not-reusable') });
    // a retired connection (drain) is closed by its release: no reset round trip is spent on it
    if (!conn.needsReset() || poolLease.retiring) return poolLease.pool.release(poolLease, REUSABLE);
    conn.reset(this.resetTimeoutMs).then(
      () => !poolLease.released && poolLease.pool.release(poolLease, REUSABLE),
      () => {
        this.resetFailures.set(poolLease.backend, (this.resetFailures.get(poolLease.backend) ?? 0) + 1);
        if (!poolLease.released) poolLease.pool.release(poolLease, { reusable: false, reason: 'reset-failed' });
      },
    );
  }

  private lend(poolLease: PoolLease, joinable: boolean): PgLease {
    const lending = new Lending(poolLease, poolLease.connection, joinable);
    if (joinable) this.joinable.add(poolLease.backend, lending);
    return new PgLease(lending.connection, poolLease.backend, lending);
  }

  private closeJoining(lending: Lending): void {
    if (!lending.joinable) return;
    lending.joinable = false;
    this.joinable.remove(lending.poolLease.backend, lending);
  }

  load(backend: string): { inUse: number; waiters: number; capacity: number } {
    const stats = this.pools.get(backend)?.stats();
    return stats ? { inUse: stats.inUse, waiters: stats.waiters, capacity: stats.capacity } : { inUse: 0, waiters: 0, capacity: 1 };
  }

  /** Pool figures, with the resets this class ran counted as the pool's reset failures. */
  stats(): PoolStats[] {
    return this.pools.stats().map((stats) => ({ ...stats, resetFailures: stats.resetFailures + (this.resetFailures.get(stats.backend) ?? 0) }));
  }

  close(deadlineMs: number): Promise<void> {
    return this.pools.drain({ deadlineMs });
  }

  private addressOf(config: BackendConfig): string {
    return this.topology().backend(config.name)?.connectAddress ?? config.address;
  }
}
