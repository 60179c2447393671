// The pools of one edge, keyed by backend name, reconfigured per config epoch without
// disturbing the pools of backends that stay.
import { BackendPool, type DrainOptions } from './backend-pool';
import { PoolErrors } from './errors';
import { checkFactory, resolveSizing } from './pool-options';
import type { AcquireOptions, ConnectionFactory, Lease, PoolSizing, PoolStats, ReleaseOptions } from './types';

/** One backend's pool in a configuration epoch. */
export interface BackendPoolConfig<C> extends PoolSizing {
  backend: string;
  factory: ConnectionFactory<C>;
  /**
   * What the factory connects to (address, user, database, TLS...). When it changes, the pool
   * takes the new factory and retires its connections; while it stays the same, the pool keeps
   * its factory and connections whatever factory object the new epoch brings.
   */
  connectionKey?: string;
}

export interface PoolSetOptions {
  /** Drain deadline for pools of backends removed from the configuration (default 30 000 ms). */
  removedDrainDeadlineMs?: number;
}

interface Entry<C> {
  pool: BackendPool<C>;
  connectionKey: string | undefined;
}

const SET_NAME = 'pool-set';

export class PoolSet<C> {
  private readonly entries = new Map<string, Entry<C>>();
  /** Drains of pools whose backend left the configuration. */
  private readonly draining = new Set<Promise<void>>();
  private configuredEpoch = -1;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: PoolSetOptions = {}) {}

  /** The epoch of the last configuration applied (-1 before the first). */
  get epoch(): number {
    return this.configuredEpoch;
  }

  /**
   * Applies a configuration epoch: new backends get pools, kept ones are resized in place,
   * removed ones are drained. An epoch not newer than the current one is ignored (returns false).
   * Validates every entry before changing anything.
   */
  configure(epoch: number, backends: readonly BackendPoolConfig<C>[]): boolean {
    if (this.closing !== undefined) throw PoolErrors.closed(SET_NAME);
    if (epoch <= this.configuredEpoch) return false;
    checkConfigs(backends);
    const wanted = new Set(backends.map((b) => b.backend));
    for (const [backend, entry] of this.entries) {
      if (!wanted.has(backend)) this.remove(backend, entry);
    }
    for (const config of backends) this.apply(config);
    this.configuredEpoch = epoch;
    return true;
  }

  get(backend: string): BackendPool<C> | undefined {
    return this.entries.get(backend)?.pool;
  }

  /** The pool of `backend`; throws DBP_ERR_POOL_UNKNOWN_BACKEND when the configuration has none. */
  pool(backend: string): BackendPool<C> {
    const entry = this.entries.get(backend);
    if (entry === undefined) throw PoolErrors.unknownBackend(backend);
    return entry.pool;
  }

  backends(): string[] {
    return [...this.entries.keys()];
  }

  tryAcquire(backend: string, options?: AcquireOptions): Lease<C> | undefined {
    return this.pool(backend).tryAcquire(options);
  }

  acquire(backend: string, options?: AcquireOptions): Promise<Lease<C>> {
    const entry = this.entries.get(backend);
    if (entry === undefined) return Promise.reject(PoolErrors.unknownBackend(backend));
    return entry.pool.acquire(options);
  }

  /** Releases to the pool that granted the lease, even if that pool has since left the set. */
  release(lease: Lease<C>, options: ReleaseOptions): void {
    lease.pool.release(lease, options);
  }

  /** Drain action on one backend: its connections close as they come back. */
  retire(backend: string, reason: string): void {
    this.pool(backend).retire(reason);
  }

  /** offline_hard on one backend: its connections close now, lent ones under their borrowers. */
  closeConnections(backend: string, reason: string): void {
    this.pool(backend).closeConnections(reason);
  }

  stats(): PoolStats[] {
    return [...this.entries.values()].map((entry) => entry.pool.stats());
  }

  /** Drains every pool, those already leaving included; the set takes no new configuration. */
  drain(options?: DrainOptions): Promise<void> {
    if (this.closing === undefined) {
      const drains = [...this.entries.values()].map((entry) => entry.pool.drain(options));
      this.entries.clear();
      this.closing = Promise.all([...drains, ...this.draining]).then(() => undefined);
    }
    return this.closing;
  }

  close(): Promise<void> {
    return this.drain({ deadlineMs: 0 });
  }

  private apply(config: BackendPoolConfig<C>): void {
    const entry = this.entries.get(config.backend);
    if (entry === undefined) {
      this.entries.set(config.backend, { pool: new BackendPool(config), connectionKey: config.connectionKey });
      return;
    }
    entry.pool.configure(config);
    if (config.connectionKey !== entry.connectionKey) {
      entry.pool.replaceFactory(config.factory, 'connection-changed');
      entry.connectionKey = config.connectionKey;
    }
  }

  private remove(backend: string, entry: Entry<C>): void {
    this.entries.delete(backend);
    const drained = entry.pool.drain({ deadlineMs: this.options.removedDrainDeadlineMs });
    this.draining.add(drained);
    void drained.then(() => this.draining.delete(drained));
  }
}

/** Rejects duplicate names and invalid sizes before any pool is touched. */
function checkConfigs<C>(backends: readonly BackendPoolConfig<C>[]): void {
  const seen = new Set<string>();
  for (const config of backends) {
    if (typeof config.backend !== 'string' || config.backend === '') {
      throw PoolErrors.invalidOptions(String(config.backend), 'backend must be a non-empty string');
    }
    if (seen.has(config.backend)) throw PoolErrors.invalidOptions(config.backend, 'backend named twice');
    seen.add(config.backend);
    resolveSizing(config.backend, config);
    checkFactory(config.backend, config.factory);
  }
}
