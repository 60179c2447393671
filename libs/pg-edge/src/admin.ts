// GET /postgres/backends: every backend with its topology state, transparent sessions and
// transaction-mode pool figures (spec 003 Operations), and the sessions of each pg-edge process.
import type { PoolStats } from '@dbproxy/pool';
import type { BackendDirectory } from './backend-directory';

/** What each process (the edge, or each of its workers) reports; the route sums them. */
export interface ProcessFigures {
  readonly pid: number;
  /** Client sessions this process serves (either mode). */
  readonly sessions: number;
  readonly pools: readonly PoolStats[];
  readonly transparent: Readonly<Record<string, number>>;
}

export const FIGURES_TOPIC = 'pg-edge/backends';

const SUMMED = ['total', 'idle', 'inUse', 'waiters', 'capacity', 'checkouts', 'acquireTimeouts', 'resetFailures', 'creates', 'createFailures'] as const;

/** Sums pool figures and session counts per backend across processes. */
export function mergeFigures(parts: readonly ProcessFigures[]): MergedFigures {
  const pools = new Map<string, PoolStats>();
  const transparent = new Map<string, number>();
  const processes = parts.map((p) => ({ pid: p.pid, sessions: p.sessions }));
  for (const part of parts) {
    for (const [name, n] of Object.entries(part.transparent)) transparent.set(name, (transparent.get(name) ?? 0) + n);
    for (const stats of part.pools) {
      const seen = pools.get(stats.backend);
      if (!seen) {
        pools.set(stats.backend, { ...stats });
        continue;
      }
      for (const key of SUMMED) seen[key] += stats[key];
      seen.pressure = seen.capacity > 0 ? (seen.inUse + seen.waiters) / seen.capacity : 0;
    }
  }
  return { pools: [...pools.values()], transparent, processes };
}

export interface MergedFigures {
  readonly pools: PoolStats[];
  readonly transparent: Map<string, number>;
  /** One entry per process serving pg-edge connections (the edge itself, or each of its workers). */
  readonly processes: { pid: number; sessions: number }[];
}

export interface BackendsReport {
  readonly routing_mode: 'transparent' | 'transaction';
  readonly backends: readonly Record<string, unknown>[];
  /** The same backends grouped by shard: each shard's primary and replicas, by name. */
  readonly shards: Readonly<Record<string, { primary: string[]; replicas: string[] }>>;
  readonly processes: readonly { pid: number; sessions: number }[];
}

export function backendsReport(mode: 'transparent' | 'transaction', directory: BackendDirectory, figures: MergedFigures): BackendsReport {
  const byName = new Map(figures.pools.map((p) => [p.backend, p]));
  const transparentLoad = figures.transparent;
  const described = directory.describe();
  const shards: Record<string, { primary: string[]; replicas: string[] }> = {};
  for (const { config, state } of described) {
    const group = (shards[config.shard] ??= { primary: [], replicas: [] });
    ((state?.role ?? config.role) === 'primary' ? group.primary : group.replicas).push(config.name);
  }
  return {
    routing_mode: mode,
    processes: figures.processes,
    shards,
    backends: described.map(({ config, state }) => {
      const pool = byName.get(config.name);
      return {
        name: config.name,
        address: config.address,
        connect_address: state?.connectAddress ?? config.address,
        shard: config.shard,
        role: state?.role ?? config.role,
        weight: config.weight,
        healthy: state?.healthy ?? null,
        lagging: state?.lagging ?? null,
        shunned: state?.shunned ?? null,
        draining: state?.draining ?? null,
        status: state?.status ?? config.status,
        transparent_sessions: transparentLoad.get(config.name) ?? 0,
        transaction_pool: pool ? poolFigures(pool) : null,
      };
    }),
  };
}

function poolFigures(p: PoolStats): Record<string, number> {
  return {
    total: p.total,
    idle: p.idle,
    in_use: p.inUse,
    waiters: p.waiters,
    capacity: p.capacity,
    pressure: p.pressure,
    checkouts: p.checkouts,
    acquire_timeouts: p.acquireTimeouts,
    reset_failures: p.resetFailures,
    creates: p.creates,
    create_failures: p.createFailures,
  };
}
