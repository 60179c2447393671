// Counting commands per node by type on the hot path: a field increment, published once a second.
import { CommandFlag } from './command-flags';
import type { CommandSpec } from './command-table';
import type { EndpointRoute } from './link-directory';

export function countCommand(route: EndpointRoute, spec: CommandSpec): void {
  const c = route.counts;
  if ((spec.flags & CommandFlag.Write) !== 0) c.writes++;
  else if ((spec.flags & CommandFlag.ReadOnly) !== 0) c.reads++;
  else c.others++;
}
