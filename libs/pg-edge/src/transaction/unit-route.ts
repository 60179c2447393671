// Where one unit of work (a simple query, or an extended batch up to Sync) runs when the session
// holds no connection: a replica for reads, the primary for writes, locking reads, transaction
// control, session state, COPY and the read-after-write window; refusals of writes on the read-only listener.
// Several statements of one simple query come as one route each (multi-statement.ts): the most
// demanding decides, as if they were sent one by one. A multi-statement Parse goes to the primary,
// whose own 42601 answers it.
import type { SqlRoute } from '@dbproxy/sql';
import type { ListenerRole } from '../edge-context';
import { PgEdgeErrors } from '../errors';

export type UnitDecision =
  | { readonly kind: 'refuse'; readonly error: Error; readonly reason: 'read_only' }
  | {
      readonly kind: 'run';
      readonly role: 'primary' | 'replica';
      /** BEGIN or session state: the connection stays with the session after the unit. */
      readonly reserved: boolean;
      /** Session state (SET, LISTEN, cursors, ...): keep the connection for the session's life. */
      readonly pin: boolean;
      /** Writes open the read-after-write window. */
      readonly write: boolean;
      /** Replica-safe reads that leave no state: they may be pipelined behind other sessions' (pipeline_depth). */
      readonly pipelinable: boolean;
    };

function refusal(route: SqlRoute, listener: ListenerRole): UnitDecision | undefined {
  const c = route.classification;
  const writes = c.family === 'write' || c.family === 'ddl' || (c.family === 'read' && c.locking);
  if (listener === 'read_only' && writes && !copiesOut(route)) {
    return { kind: 'refuse', error: PgEdgeErrors.readOnly(c.command.toUpperCase()), reason: 'read_only' };
  }
  return undefined;
}

/**
 * COPY ... TO STDOUT reads (a standby serves it), so the read-only listener runs it on a replica; on
 * the read-write listener every COPY stays on the primary (its query may call functions that write).
 * Read from the fingerprint, where literals are `?` and cannot look like the clause.
 */
function copiesOut(route: SqlRoute): boolean {
  return route.classification.command === 'copy' && /\bTO\s+STDOUT\b/i.test(route.fingerprint.text);
}

/** The decision for the statements of one unit (empty: a Sync alone, which any connection answers). */
export function decideUnit(routes: readonly SqlRoute[], listener: ListenerRole, readAfterWrite: boolean): UnitDecision {
  let replicaOk = true;
  let reserved = false;
  let pin = false;
  let write = false;
  for (const route of routes) {
    const refused = refusal(route, listener);
    if (refused) return refused;
    const c = route.classification;
    if (!route.replicaEligible || c.family !== 'read') replicaOk = false;
    if (c.transaction === 'begin' || c.transaction === 'commit_and_chain' || c.transaction === 'rollback_and_chain') reserved = true;
    if (c.session.kind === 'pin') pin = reserved = true;
    if (c.family === 'write' || c.family === 'ddl' || (c.family === 'read' && !route.replicaEligible)) write = true;
  }
  const pipelinable = replicaOk && routes.length > 0 && !reserved;
  if (listener === 'read_only') return { kind: 'run', role: 'replica', reserved, pin, write: false, pipelinable };
  const role = replicaOk && !readAfterWrite && routes.length > 0 ? 'replica' : 'primary';
  return { kind: 'run', role, reserved, pin, write, pipelinable };
}
