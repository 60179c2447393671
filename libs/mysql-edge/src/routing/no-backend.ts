// The error a statement gets when no backend can serve it: which backends of the shard there are
// and why each one is out (offline_soft/offline_hard, down, lagging, shunned, draining, unreachable
// from this process), so a client sees more than "no usable backend". A down backend's health check
// error (an OS error, an address) is not part of it: GET /mysql/backends shows it as health_error.
import type { DbproxyError } from '@dbproxy/util';
import type { BackendState, TopologyView } from '@dbproxy/topology-client';
import { MysqlEdgeErrors } from '../errors';

function whyOut(state: BackendState, suspect: boolean): string {
  if (state.status !== 'online') return `is ${state.status}`;
  if (!state.healthy) return 'is down (its health checks fail; the failure is in GET /mysql/backends)';
  if (state.shunned) return 'is shunned';
  if (state.draining) return 'is draining';
  if (state.lagging) return 'is lagging';
  if (suspect) return 'could not be reached from this proxy process';
  return 'is not usable';
}

/**
 * No backend of `shard` served `role` (a read that fell back also tried the primary): the error
 * names the role tried last and every backend of the roles tried with the reason it is out.
 */
export function noBackendError(view: TopologyView, shard: string, role: 'primary' | 'replica', fellBackToPrimary: boolean, suspect: (name: string) => boolean): DbproxyError {
  const roles = new Set<string>(fellBackToPrimary ? ['replica', 'primary'] : [role]);
  const reasons: string[] = [];
  for (const state of view.backends()) {
    if (state.shard !== shard || !roles.has(state.role)) continue;
    reasons.push(`${state.role === 'replica' && roles.size > 1 ? 'replica ' : ''}backend "${state.name}" ${whyOut(state, suspect(state.name))}`);
  }
  const tried = fellBackToPrimary ? 'primary' : role;
  const detail = reasons.length > 0 ? reasons.join('; ') : `no ${tried} backend in topology generation ${view.generation}`;
  return MysqlEdgeErrors.noBackend(tried, shard, detail);
}
