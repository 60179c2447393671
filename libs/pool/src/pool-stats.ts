// The stats snapshot of one pool (GET /postgres/backends, Prometheus, replica choice).
import type { ConnectionRoster } from './connection-roster';
import type { PoolCounters } from './pool-counters';
import type { ResolvedSizing } from './pool-options';
import type { PoolStats } from './types';

export function poolStats<C>(
  backend: string,
  sizing: ResolvedSizing,
  roster: ConnectionRoster<C>,
  waiters: number,
  counters: PoolCounters,
): PoolStats {
  const capacity = sizing.max + sizing.reserved;
  return {
    backend,
    max: sizing.max,
    reserved: sizing.reserved,
    capacity,
    total: roster.all.size - roster.creating,
    idle: roster.idle.length,
    inUse: roster.busy,
    reservedInUse: roster.busyReserved,
    resetting: roster.resetting,
    waiters,
    pendingCreates: roster.creating,
    pendingDestroys: roster.pendingDestroys,
    pressure: (roster.busy + waiters) / capacity,
    checkouts: counters.checkouts,
    acquireTimeouts: counters.acquireTimeouts,
    acquireAborts: counters.acquireAborts,
    waitersRejected: counters.waitersRejected,
    resetFailures: counters.resetFailures,
    creates: counters.creates,
    createFailures: counters.createFailures,
    resets: counters.resets,
    waitMs: counters.waits.quantiles(),
    destroys: counters.destroysByReason(),
  };
}
