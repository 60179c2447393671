// GET /postgres/backends: every backend with its topology state, transparent sessions and
// transaction-mode pool figures (spec 003 Operations).
import type { PoolStats } from '@dbproxy/pool';
import type { BackendDirectory } from './backend-directory';

export interface BackendsReport {
  readonly routing_mode: 'transparent' | 'transaction';
  readonly backends: readonly Record<string, unknown>[];
}

export function backendsReport(
  mode: 'transparent' | 'transaction',
  directory: BackendDirectory,
  transparentLoad: ReadonlyMap<string, number>,
  pools: readonly PoolStats[],
): BackendsReport {
  const byName = new Map(pools.map((p) => [p.backend, p]));
  return {
    routing_mode: mode,
    backends: directory.describe().map(({ config, state }) => {
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
