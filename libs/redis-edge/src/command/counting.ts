// Counting commands per node by type on the hot path: a field increment, published once a second;
// and the type a command's latency is filed under.
import { CommandFlag } from './command-flags';
import type { CommandSpec } from './command-table';
import type { EndpointRoute } from './link-directory';

export function countCommand(route: EndpointRoute, spec: CommandSpec): void {
  const c = route.counts;
  if ((spec.flags & CommandFlag.Write) !== 0) c.writes++;
  else if ((spec.flags & CommandFlag.ReadOnly) !== 0) c.reads++;
  else c.others++;
}

/** The command's type as `dbproxy_redis_commands_total` names it (the `route` of its latency series). */
export function commandType(spec: CommandSpec): 'read' | 'write' | 'other' {
  return (spec.flags & CommandFlag.Write) !== 0 ? 'write' : (spec.flags & CommandFlag.ReadOnly) !== 0 ? 'read' : 'other';
}

/** The `backend` of the latency series of a command sent to several nodes (fan-outs, WAIT on every shard). */
export const SEVERAL_BACKENDS = '*';

/** The `route` of blocking commands' latency series: they last as long as they block, so they are kept apart from read/write. */
export const BLOCKING_ROUTE = 'blocking';
