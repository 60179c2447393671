// mysql-edge's Prometheus metrics. Per-query figures are plain numbers bumped on the hot path and
// read into prom-client at scrape time (no label hashing per query); rarer events (logins, pins,
// errors) use prom-client counters directly. Worker processes' values are summed by the runtime.
import { Counter, Gauge } from 'prom-client';
import { EdgeLatency, type MetricsRegistry } from '@dbproxy/observability';
import type { PoolStats } from '@dbproxy/pool';
import type { ResetCounts } from './backend/backend-pools';
import type { TransitionCount } from './state-machine';

export type QueryRole = 'primary' | 'replica';

export interface QueryCell {
  count: number;
}

/** Queries by route, role and backend; pool waits. Bumped per query without allocation. */
export class QueryCounters {
  private readonly cells: Record<QueryRole, Map<string, Map<string, QueryCell>>> = { primary: new Map(), replica: new Map() };
  waitSeconds = 0;
  waits = 0;
  /** Reads written behind other sessions' reads on a lent connection (dbproxy_mysql_pipelined_queries_total). */
  pipelined = 0;
  /**
   * Reads sent to the primary because no replica was usable, by reason
   * (dbproxy_mysql_replica_fallbacks_total): in a primary-only deployment that is every read, and a
   * labelled prom-client inc hashes its labels to a key each time (about 2,000 instructions).
   */
  noReplicaFallbacks = 0;
  unreachableReplicaFallbacks = 0;

  count(route: string, role: QueryRole, backend: string): void {
    this.cell(route, role, backend).count++;
  }

  /** The counter of one (route, role, backend), made on first use and kept: a caller may hold it and bump `count` itself. */
  cell(route: string, role: QueryRole, backend: string): QueryCell {
    const byBackend = this.cells[role];
    let byRoute = byBackend.get(backend);
    if (byRoute === undefined) byBackend.set(backend, (byRoute = new Map()));
    let cell = byRoute.get(route);
    if (cell === undefined) byRoute.set(route, (cell = { count: 0 }));
    return cell;
  }

  *entries(): Generator<{ backend: string; route: string; role: QueryRole; count: number }> {
    for (const role of ['primary', 'replica'] as const) {
      for (const [backend, byRoute] of this.cells[role]) {
        for (const [route, cell] of byRoute) yield { backend, route, role, count: cell.count };
      }
    }
  }
}

export interface MetricSources {
  readonly queries: QueryCounters;
  readonly pools: () => readonly PoolStats[];
  /** The configured backends: their per-backend series exist (at zero) before their pools do. */
  readonly backends: () => readonly string[];
  readonly roleOf: (backend: string) => string;
  /** The shard a backend serves (label `shard` of per-backend metrics). */
  readonly shardOf: (backend: string) => string;
  readonly resets: () => ReadonlyMap<string, ResetCounts>;
  readonly transitions: () => readonly TransitionCount[];
  readonly classification: () => { hits: number; misses: number; size: number };
}

export interface EdgeMetrics {
  readonly sessions: Gauge<'listener'>;
  readonly logins: Counter<'result' | 'plugin' | 'tls'>;
  readonly pins: Counter<'cause'>;
  readonly errors: Counter<'code'>;
  readonly kills: Counter<'scope' | 'outcome'>;
  readonly backendFailures: Counter<'backend' | 'reason' | 'shard'>;
  /** Statements refused by shard routing, by reason (spec 000: fail closed). */
  readonly shardRefusals: Counter<'reason'>;
  /** Logins by handshake route ([[mysql.routes]]) and outcome (matched, default, refused). */
  readonly routeSessions: Counter<'route' | 'outcome'>;
  /** Keyless reads run on every shard (multi_shard = "all_shards"). */
  readonly allShardReads: Counter;
  /** Statement, pool-wait and backend latency histograms (session/statement-timing.ts observes them). */
  readonly latency: EdgeLatency;
}

type PoolField = (s: PoolStats) => number;

const POOL_GAUGES: readonly [string, string, PoolField][] = [
  ['dbproxy_mysql_pool_connections', 'Pooled backend connections open (idle + in use)', (s) => s.total],
  ['dbproxy_mysql_pool_idle', 'Pooled backend connections idle', (s) => s.idle],
  ['dbproxy_mysql_pool_in_use', 'Pooled backend connections lent out or being reset', (s) => s.inUse],
  ['dbproxy_mysql_pool_waiters', 'Acquires waiting for a pooled backend connection', (s) => s.waiters],
  ['dbproxy_mysql_pool_capacity', 'Pool bound (pool_max + reserved_pool, this process share)', (s) => s.capacity],
];

const POOL_COUNTERS: readonly [string, string, PoolField][] = [
  ['dbproxy_mysql_pool_checkouts_total', 'Connections lent by the pools', (s) => s.checkouts],
  ['dbproxy_mysql_pool_acquire_timeouts_total', 'Acquires that hit pool_acquire_timeout_seconds', (s) => s.acquireTimeouts],
  ['dbproxy_mysql_pool_reset_failures_total', 'Resets that failed or timed out (connection closed)', (s) => s.resetFailures],
  ['dbproxy_mysql_pool_connects_total', 'Backend connections opened', (s) => s.creates],
  ['dbproxy_mysql_pool_connect_failures_total', 'Backend connections that failed to open', (s) => s.createFailures],
];

/** Pool figures summed over a backend's capability profiles (0 for a configured backend without a pool yet). */
function byBackend(stats: readonly PoolStats[], field: PoolField, backends: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const backend of backends) out.set(backend, 0);
  for (const s of stats) out.set(s.backend, (out.get(s.backend) ?? 0) + field(s));
  return out;
}

function poolMetrics(registry: MetricsRegistry['registry'], sources: MetricSources): void {
  for (const [name, help, field] of POOL_GAUGES) {
    new Gauge({
      name, help, labelNames: ['backend', 'role', 'shard'], registers: [registry],
      collect(this: Gauge<'backend' | 'role' | 'shard'>) {
        this.reset();
        for (const [backend, value] of byBackend(sources.pools(), field, sources.backends())) this.set({ backend, role: sources.roleOf(backend), shard: sources.shardOf(backend) }, value);
      },
    });
  }
  for (const [name, help, field] of POOL_COUNTERS) {
    new Counter({
      name, help, labelNames: ['backend', 'role', 'shard'], registers: [registry],
      collect(this: Counter<'backend' | 'role' | 'shard'>) {
        this.reset();
        for (const [backend, value] of byBackend(sources.pools(), field, sources.backends())) this.inc({ backend, role: sources.roleOf(backend), shard: sources.shardOf(backend) }, value);
      },
    });
  }
  new Counter({
    name: 'dbproxy_mysql_pool_resets_total', help: 'Connections returned to a pool: reset with COM_RESET_CONNECTION, or clean (nothing untracked changed, no round trip)', labelNames: ['backend', 'kind', 'shard'], registers: [registry],
    collect(this: Counter<'backend' | 'kind' | 'shard'>) {
      this.reset();
      for (const backend of sources.backends()) {
        const shard = sources.shardOf(backend);
        this.inc({ backend, kind: 'reset', shard }, 0);
        this.inc({ backend, kind: 'clean', shard }, 0);
      }
      for (const [backend, counts] of sources.resets()) {
        const shard = sources.shardOf(backend);
        this.inc({ backend, kind: 'reset', shard }, counts.resets);
        this.inc({ backend, kind: 'clean', shard }, counts.clean);
      }
    },
  });
}

/** A counter without labels whose value is a plain number bumped on the hot path, read at scrape time. */
function scrapedCount(registry: MetricsRegistry['registry'], name: string, help: string, read: () => number): void {
  new Counter({
    name, help, registers: [registry],
    collect(this: Counter) {
      this.reset();
      this.inc(read());
    },
  });
}

function hotPathMetrics(registry: MetricsRegistry['registry'], sources: MetricSources): void {
  new Counter({
    name: 'dbproxy_mysql_queries_total', help: 'Client commands sent to a backend, by route, backend role, backend and shard', labelNames: ['route', 'role', 'backend', 'shard'], registers: [registry],
    collect(this: Counter<'route' | 'role' | 'backend' | 'shard'>) {
      this.reset();
      for (const backend of sources.backends()) {
        const role = sources.roleOf(backend) === 'replica' ? 'replica' : 'primary';
        this.inc({ route: role, role, backend, shard: sources.shardOf(backend) }, 0);
      }
      for (const e of sources.queries.entries()) this.inc({ route: e.route, role: e.role, backend: e.backend, shard: sources.shardOf(e.backend) }, e.count);
    },
  });
  scrapedCount(registry, 'dbproxy_mysql_pool_wait_seconds_total', 'Time commands waited for a pooled connection', () => sources.queries.waitSeconds);
  scrapedCount(registry, 'dbproxy_mysql_pool_waits_total', 'Commands that had to wait for a pooled connection', () => sources.queries.waits);
  scrapedCount(
    registry,
    'dbproxy_mysql_pipelined_queries_total',
    "Autocommit reads written behind other sessions' reads on a lent connection instead of waiting for one (pipeline_depth)",
    () => sources.queries.pipelined,
  );
  new Counter({
    name: 'dbproxy_mysql_replica_fallbacks_total', help: 'Reads sent to the primary because no replica was usable', labelNames: ['reason'], registers: [registry],
    collect(this: Counter<'reason'>) {
      this.reset();
      this.inc({ reason: 'no_replica' }, sources.queries.noReplicaFallbacks);
      this.inc({ reason: 'replica_unreachable' }, sources.queries.unreachableReplicaFallbacks);
    },
  });
  new Counter({
    name: 'dbproxy_mysql_state_transitions_total', help: 'Session and backend-connection state changes', labelNames: ['kind', 'from', 'to'], registers: [registry],
    collect(this: Counter<'kind' | 'from' | 'to'>) {
      this.reset();
      for (const t of sources.transitions()) this.inc({ kind: t.kind, from: t.from, to: t.to }, t.count);
    },
  });
  new Counter({
    name: 'dbproxy_mysql_classification_cache_lookups_total', help: 'Statement-shape cache lookups of the SQL router', labelNames: ['result'], registers: [registry],
    collect(this: Counter<'result'>) {
      this.reset();
      const s = sources.classification();
      this.inc({ result: 'hit' }, s.hits);
      this.inc({ result: 'miss' }, s.misses);
    },
  });
}

export function createEdgeMetrics(metrics: MetricsRegistry, sources: MetricSources): EdgeMetrics {
  poolMetrics(metrics.registry, sources);
  hotPathMetrics(metrics.registry, sources);
  return {
    latency: new EdgeLatency(metrics, 'mysql'),
    sessions: metrics.gauge({ name: 'dbproxy_mysql_sessions', help: 'Client sessions open', labelNames: ['listener'] }),
    logins: metrics.counter({ name: 'dbproxy_mysql_logins_total', help: 'Client logins by result, auth plugin and TLS', labelNames: ['result', 'plugin', 'tls'] }),
    pins: metrics.counter({ name: 'dbproxy_mysql_pins_total', help: 'Sessions that started holding one backend connection, by cause', labelNames: ['cause'] }),
    errors: metrics.counter({ name: 'dbproxy_mysql_errors_total', help: 'ERR packets sent to clients (the edge\'s own and forwarded backend errors), by errno', labelNames: ['code'] }),
    kills: metrics.counter({ name: 'dbproxy_mysql_kills_total', help: 'KILL statements of clients served by the edge (outcome ok, denied or refused)', labelNames: ['scope', 'outcome'] }),
    shardRefusals: metrics.counter({ name: 'dbproxy_mysql_shard_refusals_total', help: 'Statements refused by shard routing (no key, several shards, key assigned, join, merge, transaction on another shard, users.shards...), by reason', labelNames: ['reason'] }),
    routeSessions: metrics.counter({ name: 'dbproxy_mysql_route_sessions_total', help: 'Logins by handshake route ([[mysql.routes]]; "(default)": mysql.route_default, "(none)": refused with 1049) and outcome', labelNames: ['route', 'outcome'] }),
    allShardReads: metrics.counter({ name: 'dbproxy_mysql_all_shard_reads_total', help: 'Keyless reads run on every shard and concatenated (mysql.sharding.multi_shard = "all_shards")' }),
    backendFailures: metrics.counter({ name: 'dbproxy_mysql_backend_failures_total', help: 'Backend connections lost or failed while serving a client', labelNames: ['backend', 'reason', 'shard'] }),
  };
}
