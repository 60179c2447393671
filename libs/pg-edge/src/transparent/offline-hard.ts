// Session mode and backend status: a backend set offline_hard has its sessions' connections
// closed now (each transparent session owns its backend connection; there is no pool to retire).
import { retirementOf, type TopologyView } from '@dbproxy/topology-client';
import type { TransparentSession } from './transparent-session';

/** Closes the transparent sessions on backends that went offline_hard in `view`. */
export function closeOfflineHard(sessions: Iterable<TransparentSession>, view: TopologyView, previous: TopologyView): void {
  const hard = new Set<string>();
  for (const state of view.backends()) if (retirementOf(state, previous.backend(state.name))?.now) hard.add(state.name);
  if (hard.size === 0) return;
  for (const session of sessions) {
    const backend = session.backendName;
    if (backend !== undefined && hard.has(backend)) session.destroy(`backend ${backend} set offline_hard`);
  }
}
