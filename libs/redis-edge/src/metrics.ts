// redis-edge's Prometheus metrics: sessions, commands by type and shard, redirects, retries,
// blocking leases, rejected commands, backpressure, connection-mode shard selection.
import type { Counter, Gauge } from 'prom-client';
import { EdgeLatency, type MetricsRegistry } from '@dbproxy/observability';

/** Per-route command counts, bumped on the hot path as plain numbers and published once a second. */
export interface CommandCounts {
  reads: number;
  writes: number;
  others: number;
  published: [number, number, number];
}

export interface RedisEdgeMetrics {
  readonly sessions: Gauge<'mode' | 'listener'>;
  readonly commands: Counter<'type' | 'shard' | 'backend'>;
  readonly fanouts: Counter<'policy'>;
  readonly redirects: Counter<'kind'>;
  readonly retries: Counter<'reason'>;
  readonly rejected: Counter<'reason' | 'listener'>;
  readonly leaseEvents: Counter<'event'>;
  readonly backpressure: Counter<'reason'>;
  readonly shardSelections: Counter<'listener' | 'shard' | 'how'>;
  readonly shardRefusals: Counter<'reason'>;
  readonly backendErrors: Counter<'kind'>;
  /** Command latency (forwarded single-node commands: sent to their reply leaving for the client), by listener, type and node. */
  readonly latency: EdgeLatency;
}

export interface MetricSources {
  /** Blocking connections open per node (leased or idle). */
  leases(): ReadonlyMap<string, number>;
  /** Backend connections open or opening in this process. */
  links(): number;
}

export function createRedisEdgeMetrics(metrics: MetricsRegistry, sources: MetricSources): RedisEdgeMetrics {
  metrics.gauge({
    name: 'dbproxy_redis_blocking_leases',
    help: 'Dedicated connections for blocking commands open per node (leased or idle)',
    labelNames: ['node'],
    collect(this: Gauge<'node'>) {
      this.reset();
      for (const [node, open] of sources.leases()) this.set({ node }, open);
    },
  });
  metrics.gauge({
    name: 'dbproxy_redis_backend_connections',
    help: 'Command-mode backend connections open or opening (shared, per session, pub/sub, leases)',
    collect(this: Gauge) {
      this.set(sources.links());
    },
  });
  return {
    latency: new EdgeLatency(metrics, 'redis'),
    sessions: metrics.gauge({ name: 'dbproxy_redis_sessions', help: 'Client sessions open', labelNames: ['mode', 'listener'] }),
    commands: metrics.counter({ name: 'dbproxy_redis_commands_total', help: 'Commands sent to backends by type (read, write, other) and shard', labelNames: ['type', 'shard', 'backend'] }),
    fanouts: metrics.counter({ name: 'dbproxy_redis_fanouts_total', help: 'Commands split over several shards or sent to every shard, by merge policy', labelNames: ['policy'] }),
    redirects: metrics.counter({ name: 'dbproxy_redis_redirects_total', help: 'MOVED and ASK replies followed for clients', labelNames: ['kind'] }),
    retries: metrics.counter({ name: 'dbproxy_redis_retries_total', help: 'Commands retried after TRYAGAIN or CLUSTERDOWN', labelNames: ['reason'] }),
    rejected: metrics.counter({ name: 'dbproxy_redis_rejected_commands_total', help: 'Commands refused by the proxy before routing', labelNames: ['reason', 'listener'] }),
    leaseEvents: metrics.counter({ name: 'dbproxy_redis_blocking_lease_events_total', help: 'Blocking-command leases: leased, returned, closed, refused, abandoned', labelNames: ['event'] }),
    backpressure: metrics.counter({ name: 'dbproxy_redis_backpressure_pauses_total', help: 'Sessions that stopped reading: outstanding replies or client output over their bound', labelNames: ['reason'] }),
    shardSelections: metrics.counter({ name: 'dbproxy_redis_shard_selections_total', help: 'Connection-mode sessions by shard and how it was chosen', labelNames: ['listener', 'shard', 'how'] }),
    shardRefusals: metrics.counter({ name: 'dbproxy_redis_shard_refusals_total', help: 'Connection-mode sessions refused before reaching a backend', labelNames: ['reason'] }),
    backendErrors: metrics.counter({ name: 'dbproxy_redis_backend_errors_total', help: 'Backend connections lost, timed out or refused', labelNames: ['kind'] }),
  };
}

/** Adds what `counts` gained since the last call to the commands counter. */
export function publishCommandCounts(counter: RedisEdgeMetrics['commands'], shard: string, backend: string, counts: CommandCounts): void {
  const now: [number, number, number] = [counts.reads, counts.writes, counts.others];
  const types = ['read', 'write', 'other'] as const;
  for (let t = 0; t < 3; t++) {
    const delta = now[t] - counts.published[t];
    if (delta > 0) counter.inc({ type: types[t], shard, backend }, delta);
  }
  counts.published = now;
}
