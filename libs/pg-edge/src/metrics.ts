// pg-edge's Prometheus metrics (spec 003 Operations): sessions, routes, pins, rejections, cancels, pool figures.
import type { Counter, Gauge } from 'prom-client';
import { EdgeLatency, type MetricsRegistry } from '@dbproxy/observability';
import type { PoolStats } from '@dbproxy/pool';

export interface PgEdgeMetrics {
  readonly sessions: Gauge<'mode' | 'listener'>;
  readonly routes: Counter<'route' | 'listener'>;
  readonly transactionPins: Counter<'listener'>;
  readonly sessionPins: Counter<'listener'>;
  readonly readOnlyRejections: Counter<'listener'>;
  readonly routingFailures: Counter<'reason'>;
  readonly cancelRequests: Counter<'mode' | 'outcome'>;
  readonly startupRejections: Counter<'reason'>;
  /** Startups by handshake route ([[postgres.routes]]) and outcome (matched, default, refused). */
  readonly routeSessions: Counter<'route' | 'outcome'>;
  readonly fallbacks: Counter<'mode'>;
  readonly sessionsPoisoned: Counter<'reason'>;
  /** Units queued behind other sessions' reads on a lent connection (pipeline_depth > 1). */
  readonly pipelinedUnits: Counter;
  /** Per-statement route counts, added to `routes` and `fallbacks` at scrape time. */
  readonly routeTally: RouteTally;
  /** Units routed by statement sharding ([[postgres.sharding.rules]]), by shard (a read on every shard counts once per shard). */
  readonly shardUnits: Counter<'shard'>;
  /** Sessions closed for a silent client: `idle` (client_read_timeout_seconds) or `login` (the startup deadline). */
  readonly clientTimeouts: Counter<'mode' | 'kind'>;
  /** Connects to a backend that failed before anything was sent, retried on another backend (`to`: replica, primary). */
  readonly connectRetries: Counter<'mode' | 'to'>;
  /** Unit (statement), pool-wait and backend latency histograms (transaction/unit-timing.ts observes them). */
  readonly latency: EdgeLatency;
}

/** Per-backend pool figures, read from the pools at scrape time. */
export type PoolFigures = () => readonly { readonly stats: PoolStats; readonly shard: string; readonly role: string }[];

const POOL_GAUGES: readonly [string, string, (s: PoolStats) => number][] = [
  ['dbproxy_pg_pool_connections', 'Transaction-mode pool connections open (idle + in use)', (s) => s.total],
  ['dbproxy_pg_pool_idle', 'Transaction-mode pool connections idle', (s) => s.idle],
  ['dbproxy_pg_pool_in_use', 'Transaction-mode pool connections lent out or resetting', (s) => s.inUse],
  ['dbproxy_pg_pool_waiters', 'Acquires waiting for a transaction-mode pool connection', (s) => s.waiters],
  ['dbproxy_pg_pool_capacity', 'Transaction-mode pool bound (pool_max_per_backend)', (s) => s.capacity],
];

/** Events the pools count since they were made: Prometheus counters, read from the pools at scrape time. */
const POOL_COUNTERS: readonly [string, string, (s: PoolStats) => number][] = [
  ['dbproxy_pg_pool_checkouts_total', 'Transaction-mode pool connections lent', (s) => s.checkouts],
  ['dbproxy_pg_pool_acquire_timeouts_total', 'Acquires that timed out (pool_acquire_timeout_seconds)', (s) => s.acquireTimeouts],
  ['dbproxy_pg_pool_reset_failures_total', 'Connections whose ROLLBACK + DISCARD ALL failed (closed, not reused)', (s) => s.resetFailures],
  ['dbproxy_pg_pool_connects_total', 'Transaction-mode backend connections opened', (s) => s.creates],
  ['dbproxy_pg_pool_connect_failures_total', 'Transaction-mode backend connections that failed to open', (s) => s.createFailures],
];

type RouteName = 'primary' | 'replica' | 'held' | 'fallback';
export type RouteCounters = Readonly<Record<RouteName, { inc(): void }>>;

/**
 * Transaction-mode routes are counted per statement: plain numbers per listener here, added to
 * `dbproxy_pg_query_routes_total` and `dbproxy_pg_replica_fallbacks_total{mode="transaction"}`
 * when they are scraped (prom-client hashes the labels on every inc()).
 */
export class RouteTally {
  private readonly pending = new Map<string, Record<RouteName, number>>();

  of(listener: string): Record<RouteName, number> {
    let counts = this.pending.get(listener);
    if (!counts) {
      counts = { primary: 0, replica: 0, held: 0, fallback: 0 };
      this.pending.set(listener, counts);
    }
    return counts;
  }

  flushRoutes(routes: Counter<'route' | 'listener'>): void {
    for (const [listener, counts] of this.pending) {
      for (const route of ['primary', 'replica', 'held'] as const) {
        if (counts[route] > 0) routes.inc({ route, listener }, counts[route]);
        counts[route] = 0;
      }
    }
  }

  flushFallbacks(fallbacks: Counter<'mode'>): void {
    let total = 0;
    for (const counts of this.pending.values()) {
      total += counts.fallback;
      counts.fallback = 0;
    }
    if (total > 0) fallbacks.inc({ mode: 'transaction' }, total);
  }
}

/** Route counters of one session's listener: a plain increment per statement. */
export function routeCounters(metrics: PgEdgeMetrics, listener: string): RouteCounters {
  const counts = metrics.routeTally.of(listener);
  return {
    primary: { inc: () => void counts.primary++ },
    replica: { inc: () => void counts.replica++ },
    held: { inc: () => void counts.held++ },
    fallback: { inc: () => void counts.fallback++ },
  };
}

/**
 * prom-client runs a metric's `collect` before every scrape (MetricsRegistry.counter() takes none);
 * a registry shared by two edges in one process keeps both collects.
 */
function collectedBy<C extends object>(counter: C, collect: (counter: C) => void): C {
  const previous = (counter as { collect?: () => void }).collect;
  return Object.assign(counter, {
    collect: () => {
      previous?.();
      collect(counter);
    },
  });
}

export function createPgEdgeMetrics(metrics: MetricsRegistry, pools: PoolFigures, bufferedResultBytes: () => number = () => 0): PgEdgeMetrics {
  metrics.gauge({
    name: 'dbproxy_pg_buffered_result_bytes',
    help: 'Result bytes transaction-mode sessions of this process hold until their results complete (bounded by max_buffered_result_bytes)',
    collect(this: Gauge) {
      this.set(bufferedResultBytes());
    },
  });
  for (const [name, help, value] of POOL_GAUGES) {
    metrics.gauge({
      name,
      help,
      labelNames: ['backend', 'shard', 'role'],
      collect(this: Gauge<'backend' | 'shard' | 'role'>) {
        this.reset();
        for (const pool of pools()) this.set({ backend: pool.stats.backend, shard: pool.shard, role: pool.role }, value(pool.stats));
      },
    });
  }
  for (const [name, help, value] of POOL_COUNTERS) {
    metrics.counter({
      name,
      help,
      labelNames: ['backend', 'shard', 'role'],
      collect(this: Counter<'backend' | 'shard' | 'role'>) {
        this.reset();
        for (const pool of pools()) this.inc({ backend: pool.stats.backend, shard: pool.shard, role: pool.role }, value(pool.stats));
      },
    });
  }
  const routeTally = new RouteTally();
  return {
    latency: new EdgeLatency(metrics, 'postgres'),
    routeTally,
    sessions: metrics.gauge({ name: 'dbproxy_pg_sessions', help: 'Client sessions open', labelNames: ['mode', 'listener'] }),
    routes: collectedBy(
      metrics.counter({ name: 'dbproxy_pg_query_routes_total', help: 'Transaction-mode statements by where they ran', labelNames: ['route', 'listener'] }),
      (routes) => routeTally.flushRoutes(routes),
    ),
    transactionPins: metrics.counter({ name: 'dbproxy_pg_transaction_pins_total', help: 'Transactions that reserved a backend connection until COMMIT/ROLLBACK', labelNames: ['listener'] }),
    sessionPins: metrics.counter({ name: 'dbproxy_pg_session_pins_total', help: 'Sessions pinned to one backend connection for life (SET, LISTEN, cursors...)', labelNames: ['listener'] }),
    readOnlyRejections: metrics.counter({ name: 'dbproxy_pg_read_only_rejections_total', help: 'Writes refused on the read-only listener', labelNames: ['listener'] }),
    routingFailures: metrics.counter({ name: 'dbproxy_pg_routing_failures_total', help: 'Statements or connections that could not be routed', labelNames: ['reason'] }),
    cancelRequests: metrics.counter({ name: 'dbproxy_pg_cancel_requests_total', help: 'CancelRequests received', labelNames: ['mode', 'outcome'] }),
    startupRejections: metrics.counter({ name: 'dbproxy_pg_startup_rejections_total', help: 'Connections refused during startup', labelNames: ['reason'] }),
    routeSessions: metrics.counter({ name: 'dbproxy_pg_route_sessions_total', help: 'Startups by handshake route ([[postgres.routes]]; "(default)": postgres.route_default, "(none)": refused with 3D000) and outcome', labelNames: ['route', 'outcome'] }),
    fallbacks: collectedBy(
      metrics.counter({ name: 'dbproxy_pg_replica_fallbacks_total', help: 'Reads sent to the primary because no replica was usable', labelNames: ['mode'] }),
      (fallbacks) => routeTally.flushFallbacks(fallbacks),
    ),
    sessionsPoisoned: metrics.counter({ name: 'dbproxy_pg_sessions_poisoned_total', help: 'Pinned sessions ended because their backend connection was lost', labelNames: ['reason'] }),
    shardUnits: metrics.counter({ name: 'dbproxy_pg_shard_units_total', help: 'Transaction-mode units routed by [[postgres.sharding.rules]], by shard', labelNames: ['shard'] }),
    pipelinedUnits: metrics.counter({ name: 'dbproxy_pg_pipelined_units_total', help: 'Reads queued behind other sessions\' reads on a lent connection instead of waiting for one (pipeline_depth)' }),
    clientTimeouts: metrics.counter({ name: 'dbproxy_pg_client_timeouts_total', help: 'Sessions closed because the client was silent (idle: client_read_timeout_seconds; login: the startup deadline)', labelNames: ['mode', 'kind'] }),
    connectRetries: metrics.counter({ name: 'dbproxy_pg_backend_connect_retries_total', help: 'Backend connects refused before anything was sent, retried on another backend', labelNames: ['mode', 'to'] }),
  };
}
