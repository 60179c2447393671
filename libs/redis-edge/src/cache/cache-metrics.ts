// The reply cache's metrics: plain counters bumped on the hot path, handed to Prometheus when it
// reads them; every series exists at zero from the start.
import type { Counter, Gauge } from 'prom-client';
import type { MetricsRegistry } from '@dbproxy/observability';
import { CacheCounters, FLUSH_REASONS } from './reply-store';

export interface CacheMetricSource {
  /** The counters of the cache in force (a fresh one while the cache is off). */
  counters(): CacheCounters;
  entries(): number;
  bytes(): number;
  trackers(): { ready: number; total: number };
}

type Published = { hits: number; misses: number; fills: number; fillsDropped: number; invalidations: number; refetches: number; flushes: Map<string, number> };

export function registerCacheMetrics(metrics: MetricsRegistry, source: CacheMetricSource): void {
  const published = new WeakMap<CacheCounters, Published>();
  const seen = (c: CacheCounters): Published => {
    let p = published.get(c);
    if (!p) {
      p = { hits: 0, misses: 0, fills: 0, fillsDropped: 0, invalidations: 0, refetches: 0, flushes: new Map() };
      published.set(c, p);
    }
    return p;
  };
  const simple = (name: string, help: string, field: 'hits' | 'misses' | 'fills' | 'fillsDropped' | 'invalidations' | 'refetches') =>
    metrics.counter({
      name,
      help,
      collect(this: Counter) {
        const c = source.counters();
        const p = seen(c);
        this.inc(c[field] - p[field]);
        p[field] = c[field];
      },
    });
  simple('dbproxy_redis_cache_hits_total', 'GET/MGET answered from the reply cache', 'hits');
  simple('dbproxy_redis_cache_misses_total', 'GET/MGET looked up in the reply cache and not found (sent to the backend)', 'misses');
  simple('dbproxy_redis_cache_fills_total', 'Keys stored in the reply cache from a fill-armed reply', 'fills');
  simple('dbproxy_redis_cache_fills_dropped_total', 'Fill-armed keys not stored: an invalidation or flush raced the fill, or the reply was not cacheable', 'fillsDropped');
  simple('dbproxy_redis_cache_invalidations_total', 'Cached keys removed by a write through the proxy or a tracking invalidation', 'invalidations');
  simple('dbproxy_redis_cache_hits_refetched_total', 'Strict hits whose key was invalidated (or whose tracker was lost) while they waited for the tracking barrier, read from the backend instead', 'refetches');
  const flushes = metrics.counter({
    name: 'dbproxy_redis_cache_flushes_total',
    help: 'Whole-cache flushes by reason: tracker_lost, fill_link_lost (the keys it tracked lost their invalidations), master_set, server_flush (null invalidation), write (keys unknown), disabled',
    labelNames: ['reason'],
    collect(this: Counter<'reason'>) {
      const c = source.counters();
      const p = seen(c);
      for (const [reason, n] of c.flushes) {
        const delta = n - (p.flushes.get(reason) ?? 0);
        if (delta > 0) this.inc({ reason }, delta);
        p.flushes.set(reason, n);
      }
    },
  });
  for (const reason of FLUSH_REASONS) flushes.inc({ reason }, 0);
  metrics.gauge({
    name: 'dbproxy_redis_cache_entries',
    help: 'Keys held by the reply cache (both generations)',
    collect(this: Gauge) {
      this.set(source.entries());
    },
  });
  metrics.gauge({
    name: 'dbproxy_redis_cache_bytes',
    help: 'Bytes held by the reply cache (keys, frames and bookkeeping)',
    collect(this: Gauge) {
      this.set(source.bytes());
    },
  });
  metrics.gauge({
    name: 'dbproxy_redis_cache_trackers',
    help: 'Tracking connections per state: ready (client id known) and wanted (one per master)',
    labelNames: ['state'],
    collect(this: Gauge<'state'>) {
      const t = source.trackers();
      this.set({ state: 'ready' }, t.ready);
      this.set({ state: 'wanted' }, t.total);
    },
  });
}
