// GET /mysql/backends: every configured backend's topology state with its pool figures summed over
// this edge's processes (workers) and capability profiles, listed and grouped by shard. A down
// backend's health_error is its last failed check's error, for operators (clients never read it).
import type { PoolStats } from '@dbproxy/pool';
import type { TopologyView } from '@dbproxy/topology-client';

interface ProcessReport {
  readonly pid: number;
  readonly sessions: number;
  readonly pools: readonly PoolStats[];
  readonly statements: number;
}

const SUMMED = ['total', 'idle', 'inUse', 'waiters', 'capacity', 'checkouts', 'acquireTimeouts', 'resetFailures', 'creates', 'createFailures'] as const;

function isReport(value: unknown): value is ProcessReport {
  return value !== null && typeof value === 'object' && Array.isArray((value as ProcessReport).pools);
}

/** The admin routes' JSON keys are snake_case (in_use, acquire_timeouts, ...). */
function snakeCasePool(sum: Record<(typeof SUMMED)[number], number> | undefined): Record<string, number> | null {
  if (sum === undefined) return null;
  return Object.fromEntries(Object.entries(sum).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}

/** The error of a backend's last health check when that check failed, else undefined. */
export type HealthErrorOf = (backend: string) => string | undefined;

export function backendsReport(gathered: readonly unknown[], view: TopologyView, healthError: HealthErrorOf = () => undefined): unknown {
  const reports = gathered.filter(isReport);
  const pools = new Map<string, Record<(typeof SUMMED)[number], number>>();
  for (const report of reports) {
    for (const stats of report.pools) {
      const sum = pools.get(stats.backend) ?? Object.fromEntries(SUMMED.map((k) => [k, 0]));
      for (const key of SUMMED) sum[key] += stats[key];
      pools.set(stats.backend, sum as Record<(typeof SUMMED)[number], number>);
    }
  }
  const backends = [...view.backends()].map((b) => ({
    name: b.name,
    shard: b.shard,
    role: b.role,
    address: b.address,
    connect_address: b.connectAddress,
    healthy: b.healthy,
    lagging: b.lagging,
    shunned: b.shunned,
    draining: b.draining,
    status: b.status,
    health_error: healthError(b.name) ?? null,
    pool: snakeCasePool(pools.get(b.name)),
  }));
  const shards: Record<string, { primary: string | null; replicas: string[]; healthy: boolean }> = {};
  for (const b of backends) {
    const shard = (shards[b.shard] ??= { primary: null, replicas: [], healthy: false });
    if (b.role === 'primary') {
      shard.primary = b.name;
      shard.healthy = b.healthy === true;
    } else shard.replicas.push(b.name);
  }
  return {
    generation: view.generation,
    processes: reports.map((r) => ({ pid: r.pid, sessions: r.sessions, statements: r.statements })),
    backends,
    shards,
  };
}
