// Backend status in redis-edge: offline backends already take no new work (the topology view leaves
// them out of every route and backend choice); one set offline_hard has its connections closed now —
// command mode's links to it, and connection mode's sessions piped to it.
import { retirementOf, type TopologyView } from '@dbproxy/topology-client';
import type { LinkDirectory } from './command/link-directory';
import type { ConnectionSession } from './connection/connection-session';
import { RedisEdgeErrors } from './errors';

/** Closes what is connected to the backends that went offline_hard in `view`. */
export function closeOfflineHard(view: TopologyView, previous: TopologyView, links: LinkDirectory, sessions: Iterable<unknown>): void {
  const hard: string[] = [];
  for (const state of view.backends()) if (retirementOf(state, previous.backend(state.name))?.now) hard.push(state.name);
  if (hard.length === 0) return;
  for (const name of hard) links.closeBackend(name, RedisEdgeErrors.backendLost(name, 'the backend was set offline_hard'));
  for (const session of sessions) {
    const served = (session as Partial<ConnectionSession>).servedBy;
    if (served !== undefined && hard.includes(served)) (session as ConnectionSession).close('offline_hard');
  }
}
