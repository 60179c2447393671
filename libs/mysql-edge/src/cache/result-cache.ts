// The MySQL result cache of one edge process (spec 000 data path): whether it may be used now
// (enabled, Redis ready, bus connected: otherwise every read goes to the backend), lookups with
// singleflight per entry, fills under max_entry_bytes with ttl_seconds, generation bumps published
// on dbproxy.cache.invalidate, its metrics and the figures of GET /mysql/cache.
import { createHash } from 'node:crypto';
import { publishMessage, subscribeMessages, Subjects, type Bus, type Subscription } from '@dbproxy/bus';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { MetricsRegistry } from '@dbproxy/observability';
import type { Counter } from 'prom-client';
import type { BypassReason, CacheScope } from './cache-eligibility';
import { isWholePackets } from './reply-sequence';
import { ResultStore, type StoreTarget } from './result-store';

const BYPASS_REASONS: readonly BypassReason[] = ['unavailable', 'transaction', 'not_cacheable', 'nondeterministic', 'table_not_cached', 'no_database'];
/** Statement shapes whose entry sizes are remembered for GET /mysql/cache. */
const SIZE_SHAPES = 1000;
const LARGEST_SHOWN = 10;

export interface CacheSettings extends CacheScope {
  readonly ttlSeconds: number;
  readonly maxEntryBytes: number;
}

/** What identifies one cached result besides its tables' generations. */
export interface EntryIdentity {
  readonly sql: string;
  readonly schema: string | null;
  readonly charset: string;
  readonly capabilities: number;
}

export interface CacheMetrics {
  readonly hits: Counter<string>;
  readonly misses: Counter<string>;
  readonly fills: Counter<string>;
  readonly joins: Counter<string>;
  readonly bypasses: Counter<'reason'>;
  readonly invalidations: Counter<'source'>;
  readonly failures: Counter<'operation'>;
}

function cacheMetrics(m: MetricsRegistry): CacheMetrics {
  const metrics: CacheMetrics = {
    hits: m.counter({ name: 'dbproxy_mysql_cache_hits_total', help: 'SELECTs answered from the result cache without a backend' }),
    misses: m.counter({ name: 'dbproxy_mysql_cache_misses_total', help: 'Cacheable SELECTs not in the cache (each ran on a backend once, or joined one that did)' }),
    fills: m.counter({ name: 'dbproxy_mysql_cache_fills_total', help: 'Results stored in the cache' }),
    joins: m.counter({ name: 'dbproxy_mysql_cache_singleflight_joins_total', help: 'Misses answered by an identical miss already running in this edge process' }),
    bypasses: m.counter({ name: 'dbproxy_mysql_cache_bypasses_total', help: 'SELECTs not looked up in the cache, by reason', labelNames: ['reason'] }),
    invalidations: m.counter({ name: 'dbproxy_mysql_cache_invalidations_total', help: 'Table generations bumped: by this process (local) or announced by other edges (bus)', labelNames: ['source'] }),
    failures: m.counter({ name: 'dbproxy_mysql_cache_redis_failures_total', help: 'Cache operations Redis did not answer (lookup, store, bump)', labelNames: ['operation'] }),
  };
  for (const reason of BYPASS_REASONS) metrics.bypasses.inc({ reason }, 0);
  for (const source of ['local', 'bus']) metrics.invalidations.inc({ source }, 0);
  for (const operation of ['lookup', 'store', 'bump']) metrics.failures.inc({ operation }, 0);
  for (const c of [metrics.hits, metrics.misses, metrics.fills, metrics.joins]) c.inc(0);
  return metrics;
}

function targetOf(config: DeepReadonly<DbproxyConfig>): (StoreTarget & { key: string }) | null {
  const c = config.mysql.cache;
  if (!c.enabled) return null;
  const backend = config.redis_backends.find((b) => b.name === c.redis_backend);
  if (backend === undefined) return null;
  const target = { address: backend.address, username: backend.username, password: backend.password, db: backend.db };
  return { ...target, key: JSON.stringify(target) };
}

export function settingsOf(config: DeepReadonly<DbproxyConfig>): CacheSettings {
  const c = config.mysql.cache;
  return { tables: new Set(c.tables.map((t) => t.toLowerCase())), ttlSeconds: c.ttl_seconds, maxEntryBytes: c.max_entry_bytes };
}

export function entryBase(id: EntryIdentity): string {
  return createHash('sha256').update(`${id.schema ?? ''}\0${id.charset}\0${id.capabilities}\0${id.sql}`).digest('hex');
}

export interface CacheDeps {
  readonly bus: Bus;
  readonly instanceId: string;
  readonly metrics: MetricsRegistry;
}

export class ResultCache {
  readonly metrics: CacheMetrics;
  private store: ResultStore | null = null;
  private storeKey = '';
  settings: CacheSettings = { tables: new Set(), ttlSeconds: 60, maxEntryBytes: 0 };
  private readonly flights = new Map<string, Promise<Buffer | null>>();
  /** Largest entry seen per statement shape (fingerprint text: literals replaced). */
  private readonly sizes = new Map<string, number>();
  private busUp: boolean;
  /** Generations were bumped since Redis was (re)connected and no bump failed since. */
  private recovered = false;
  private recovering = false;
  private readonly subscription: Subscription;
  private readonly unwatchBus: () => void;

  constructor(private readonly deps: CacheDeps) {
    this.metrics = cacheMetrics(deps.metrics);
    this.busUp = deps.bus.status() === 'connected';
    this.unwatchBus = deps.bus.onStatus((status) => (this.busUp = status === 'connected'));
    this.subscription = subscribeMessages(deps.bus, Subjects.cacheInvalidate.pattern(), (m) => {
      if (m.protocol === 'mysql' && m.instanceId !== deps.instanceId) this.metrics.invalidations.inc({ source: 'bus' }, Object.keys(m.tables).length);
    });
  }

  /** Follows a new configuration epoch (a changed redis_backend reconnects, a changed table list re-bumps). */
  configure(config: DeepReadonly<DbproxyConfig>): void {
    const previous = [...this.settings.tables].sort().join();
    this.settings = settingsOf(config);
    const target = targetOf(config);
    if ((target?.key ?? '') !== this.storeKey) {
      this.store?.close();
      this.recovered = false;
      const store = target === null ? null : new ResultStore(target, () => this.onStoreStatus(store));
      this.store = store;
      this.storeKey = target?.key ?? '';
    } else if (previous !== [...this.settings.tables].sort().join()) {
      // a table that was not cached had writes nobody bumped for: entries of an earlier listing must go
      this.recovered = false;
      this.onStoreStatus(this.store);
    }
  }

  /**
   * Redis came (back): before the cache is used again, every cached table's generation is bumped,
   * so entries stored before writes that could not bump (Redis was away) are never read.
   */
  private onStoreStatus(store: ResultStore | null): void {
    if (store === null || store !== this.store) return;
    if (!store.ready) {
      this.recovered = false;
      return;
    }
    if (this.recovered || this.recovering) return;
    this.recovering = true;
    store
      .bump([...this.settings.tables])
      .then(() => (this.recovered = store === this.store))
      .catch(() => this.metrics.failures.inc({ operation: 'bump' }))
      .finally(() => {
        this.recovering = false;
        // the status may have changed while the bump ran
        if (!this.recovered && store.ready) setTimeout(() => this.onStoreStatus(store), 200).unref();
      });
  }

  /** The store, when the cache may be used now (fail closed: Redis and the bus are both up, no bump lost since). */
  usable(): ResultStore | null {
    const store = this.store;
    return store !== null && store.ready && this.busUp && this.recovered ? store : null;
  }

  get configured(): boolean {
    return this.store !== null;
  }

  bypass(reason: BypassReason): void {
    this.metrics.bypasses.inc({ reason });
  }

  async lookup(store: ResultStore, tables: readonly string[], base: string): Promise<{ generations: string; value: Buffer | null } | null> {
    try {
      const found = await store.lookup(tables, base);
      return found.value !== null && !isWholePackets(found.value) ? { generations: found.generations, value: null } : found;
    } catch {
      this.metrics.failures.inc({ operation: 'lookup' });
      return null;
    }
  }

  /** The running miss of this entry, if any (its result, null when it was not cacheable). */
  flight(key: string): Promise<Buffer | null> | undefined {
    return this.flights.get(key);
  }

  /** Registers a miss that runs on a backend; `settle` must be called once with its response (null: not storable). */
  startFlight(key: string): (response: Buffer | null) => void {
    let settle: (response: Buffer | null) => void = () => undefined;
    this.flights.set(key, new Promise<Buffer | null>((resolve) => (settle = resolve)));
    return (response) => {
      this.flights.delete(key);
      settle(response);
    };
  }

  /** Stores a result when it fits max_entry_bytes; true when it was stored. */
  async fill(store: ResultStore, base: string, generations: string, fingerprint: string, response: Buffer): Promise<boolean> {
    if (response.length > this.settings.maxEntryBytes) return false;
    try {
      await store.store(base, generations, response, this.settings.ttlSeconds);
    } catch {
      this.metrics.failures.inc({ operation: 'store' });
      return false;
    }
    this.metrics.fills.inc();
    this.noteSize(fingerprint, response.length);
    return true;
  }

  /**
   * Bumps the generations of tables a commit wrote, then tells other edges. A bump Redis did not
   * take stops this process's cache until all cached tables are bumped; other edges that still
   * reach Redis may serve the older entries until then (README, known gaps).
   */
  async invalidate(tables: readonly string[]): Promise<void> {
    const store = this.store;
    if (store === null || tables.length === 0) return;
    try {
      const generations = await store.bump(tables);
      this.metrics.invalidations.inc({ source: 'local' }, tables.length);
      publishMessage(this.deps.bus, Subjects.cacheInvalidate, {}, { instanceId: this.deps.instanceId, protocol: 'mysql', tables: generations });
    } catch {
      this.metrics.failures.inc({ operation: 'bump' });
      // fail closed: no lookups until every cached table is bumped again (onStoreStatus)
      this.recovered = false;
      this.onStoreStatus(store);
    }
  }

  private noteSize(fingerprint: string, bytes: number): void {
    const known = this.sizes.get(fingerprint);
    if (known !== undefined && known >= bytes) return;
    if (known === undefined && this.sizes.size >= SIZE_SHAPES) {
      // forget the smallest shape: the report lists the largest
      let smallest: string | undefined;
      let min = Infinity;
      for (const [k, v] of this.sizes) if (v < min) [smallest, min] = [k, v];
      if (smallest === undefined || min >= bytes) return;
      this.sizes.delete(smallest);
    }
    this.sizes.set(fingerprint, bytes);
  }

  /** This process's part of GET /mysql/cache. */
  async report(): Promise<CacheProcessReport> {
    const total = async (c: Counter<string>): Promise<number> => (await c.get()).values.reduce((sum, v) => sum + v.value, 0);
    const m = this.metrics;
    const largest = [...this.sizes].sort((a, b) => b[1] - a[1]).slice(0, LARGEST_SHOWN).map(([fingerprint, bytes]) => ({ fingerprint, bytes }));
    return {
      pid: process.pid,
      enabled: this.store !== null,
      usable: this.usable() !== null,
      hits: await total(m.hits),
      misses: await total(m.misses),
      fills: await total(m.fills),
      joins: await total(m.joins),
      bypasses: await total(m.bypasses),
      invalidations: await total(m.invalidations),
      largest,
    };
  }

  close(): void {
    this.subscription.unsubscribe();
    this.unwatchBus();
    this.store?.close();
    this.store = null;
  }
}

export interface CacheProcessReport {
  readonly pid: number;
  readonly enabled: boolean;
  readonly usable: boolean;
  readonly hits: number;
  readonly misses: number;
  readonly fills: number;
  readonly joins: number;
  readonly bypasses: number;
  readonly invalidations: number;
  readonly largest: readonly { fingerprint: string; bytes: number }[];
}
