// GET /mysql/cache: the result cache's figures summed over this edge's processes (workers): hit
// ratio, counts, and the largest entries by statement fingerprint (literals replaced, never values).
import type { CacheProcessReport } from './result-cache';

const SHOWN = 10;

function isReport(value: unknown): value is CacheProcessReport {
  return value !== null && typeof value === 'object' && Array.isArray((value as CacheProcessReport).largest);
}

export function cacheReport(gathered: readonly unknown[]): unknown {
  const reports = gathered.filter(isReport);
  const sum = (key: 'hits' | 'misses' | 'fills' | 'joins' | 'bypasses' | 'invalidations'): number => reports.reduce((n, r) => n + r[key], 0);
  const hits = sum('hits');
  const misses = sum('misses');
  const largest = new Map<string, number>();
  for (const r of reports) for (const e of r.largest) largest.set(e.fingerprint, Math.max(e.bytes, largest.get(e.fingerprint) ?? 0));
  return {
    enabled: reports.some((r) => r.enabled),
    usable: reports.length > 0 && reports.every((r) => r.usable || !r.enabled),
    hit_ratio: hits + misses === 0 ? 0 : hits / (hits + misses),
    hits,
    misses,
    fills: sum('fills'),
    singleflight_joins: sum('joins'),
    bypasses: sum('bypasses'),
    invalidations: sum('invalidations'),
    largest_entries: [...largest].sort((a, b) => b[1] - a[1]).slice(0, SHOWN).map(([fingerprint, bytes]) => ({ fingerprint, bytes })),
    processes: reports.map((r) => ({ pid: r.pid, usable: r.usable, hits: r.hits, misses: r.misses })),
  };
}
