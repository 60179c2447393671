// Transaction mode's pools: one bounded pool per backend (libs/pool), reconfigured per epoch,
// retired when topology drains a backend or pins it to a new address.
import { PoolSet, type ConnectionFactory, type Lease, type PoolStats } from '@dbproxy/pool';
import type { TopologyView } from '@dbproxy/topology-client';
import type { BackendConfig, BackendLoad } from '../backend-directory';
import type { EdgeEpoch } from '../edge-context';
import { PgBackendConnection } from './backend-connection';

export type PgLease = Lease<PgBackendConnection>;

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
  ) {}

  create(signal: AbortSignal): Promise<PgBackendConnection> {
    return PgBackendConnection.open(this.config, this.address(), { timeoutMs: this.connectTimeoutMs, signal, maxMessageSize: this.maxMessageSize });
  }

  destroy(connection: PgBackendConnection, reason: string): void {
    connection.close(reason);
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
        factory: new PgConnectionFactory(config, () => this.addressOf(config), pg.connect_timeout_seconds * 1000, pg.max_message_bytes),
        connectionKey: JSON.stringify([config.address, config.username, config.password, config.database, config.tls]),
      })),
    );
  }

  /** Topology changed: pools of draining backends, and of backends now pinned elsewhere, retire their connections. */
  onTopology(view: TopologyView): void {
    for (const config of this.backends) {
      const state = view.backend(config.name);
      const address = state?.connectAddress ?? config.address;
      const before = this.addresses.get(config.name);
      this.addresses.set(config.name, address);
      const pool = this.pools.get(config.name);
      if (!pool) continue;
      if (state?.draining) pool.retire('drain');
      else if (before !== undefined && before !== address) pool.retire('address-changed');
    }
  }

  /** An idle connection now, or undefined (synchronous: the per-query fast path). Throws when the pool is closed. */
  tryAcquire(backend: string, reserved: boolean): PgLease | undefined {
    const pool = this.pools.get(backend);
    return pool?.isOpen ? pool.tryAcquire({ reserved }) : undefined;
  }

  /** Waits for a connection up to pool_acquire_timeout_seconds (a session that leaves meanwhile gives it straight back). */
  acquire(backend: string, reserved: boolean): Promise<PgLease> {
    return this.pools.acquire(backend, { reserved });
  }

  /** Gives a connection back: reset first when it may carry state; closed when it cannot be trusted. */
  release(lease: PgLease, reusable: boolean, reason?: string): void {
    if (lease.released) return;
    const conn = lease.connection;
    conn.detach();
    const ok = reusable && conn.alive && !conn.cancelled;
    if (!ok) return lease.pool.release(lease, { reusable: false, reason: reason ?? (conn.cancelled ? 'cancelled' : 'not-reusable') });
    if (!conn.needsReset()) return lease.pool.release(lease, { reusable: true });
    conn.reset(this.resetTimeoutMs).then(
      () => !lease.released && lease.pool.release(lease, { reusable: true }),
      () => {
        this.resetFailures.set(lease.backend, (this.resetFailures.get(lease.backend) ?? 0) + 1);
        if (!lease.released) lease.pool.release(lease, { reusable: false, reason: 'reset-failed' });
      },
    );
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
