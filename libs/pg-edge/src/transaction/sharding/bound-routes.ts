// Routes of each execution of a prepared statement: the statement's routing template (parsed once
// per statement, SqlRouter.prepare) bound to the parameters of one Bind (SqlRouter.routePrepared).
import type { Bind } from '@dbproxy/protocol-pg';
import type { PreparedRoute, SqlRoute, SqlRouter } from '@dbproxy/sql';
import { PgEdgeErrors } from '../../errors';
import type { ClientStatement } from '../statements';
import { boundValues } from './bind-values';

export class BoundRoutes {
  private readonly prepared = new WeakMap<ClientStatement, PreparedRoute>();

  constructor(private readonly router: SqlRouter) {}

  route(statement: ClientStatement, bind: Bind): SqlRoute {
    let prepared = this.prepared.get(statement);
    if (prepared === undefined) {
      prepared = this.router.prepare(statement.sql);
      this.prepared.set(statement, prepared);
    }
    const types = bind.params.map((_, i) => statement.paramTypes[i] || (statement.inferred?.[i] ?? 0));
    const { values, unreadable } = boundValues(bind, types);
    const route = this.router.routePrepared(prepared, values);
    const decision = route.decision;
    if (unreadable.length === 0 || decision.kind !== 'reject' || decision.error.code !== 'DBP_ERR_SQL_SHARD_KEY_INVALID' || !decision.error.message.includes('date')) return route;
    const [first] = unreadable;
    return { ...route, decision: { kind: 'reject', error: PgEdgeErrors.shardParameterType(first.index + 1, first.oid, first.format) } };
  }
}
