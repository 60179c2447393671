// The span tree of one MySQL command (libs/observability DbSpan): SERVER span named by the
// statement's operation and table, pool-wait child, CLIENT child per backend round trip naming the
// backend's real engine (MariaDB or MySQL, from its greeting). A sqlcommenter traceparent continues
// the client's trace. Nothing is built unless the span is recorded.
import { context } from '@opentelemetry/api';
import { contextFromTraceparent, DbSpan, mysqlSystemOf, type DbOperation } from '@dbproxy/observability';
import type { ErrPacket } from '@dbproxy/protocol-mysql';
import type { Classification, SqlRoute } from '@dbproxy/sql';
import type { Tracer } from '@opentelemetry/api';
import type { ProxiedAddresses } from '@dbproxy/runtime';
import type { BackendConnection } from '../backend/backend-connection';
import type { EdgeEpoch } from '../epoch';

/** Commands without a statement, named by their protocol command. */
const COMMAND_OPERATIONS: Readonly<Record<string, string>> = {
  query: 'COM_QUERY',
  execute: 'COM_STMT_EXECUTE',
  prepare: 'COM_STMT_PREPARE',
  'field-list': 'COM_FIELD_LIST',
  statistics: 'COM_STATISTICS',
  'init-db': 'COM_INIT_DB',
  fetch: 'COM_STMT_FETCH',
  'stmt-reset': 'COM_STMT_RESET',
};

const UPPER = new Map<string, string>();
function operationOf(command: string): string {
  let upper = UPPER.get(command);
  if (upper === undefined) {
    upper = command.toUpperCase();
    if (UPPER.size < 1024) UPPER.set(command, upper);
  }
  return upper;
}

/** The one table a statement names (qualified when the statement qualifies it); undefined for none or several. */
export function collectionOf(c: Classification): string | undefined {
  const tables = c.tables;
  if (tables.length === 0) return undefined;
  const first = tables[0];
  for (let i = 1; i < tables.length; i++) if (tables[i].name !== first.name || tables[i].schema !== first.schema) return undefined;
  return first.schema ? `${first.schema}.${first.name}` : first.name;
}

export interface StatementSession {
  readonly user: string;
  readonly listener: string;
  readonly schema: string | null;
  /** The client's addresses (a PROXY protocol header's behind a load balancer). */
  readonly origin?: ProxiedAddresses;
  /** The handshake route ([[mysql.routes]]) that chose the session's shard, when routes are configured. */
  readonly route: { readonly route: string; readonly shard: string } | null;
}

/** The SERVER span of one command; null when tracing is off or the trace is not sampled. */
export function startStatementSpan(tracer: Tracer | null, kind: string, route: SqlRoute | null, session: StatementSession): DbSpan | null {
  if (tracer === null) return null;
  const parent = route?.traceparent ? contextFromTraceparent(route.traceparent, route.tracestate) : context.active();
  const span = DbSpan.start(tracer, parent);
  if (span === null) return null;
  const c = route?.classification;
  const operation = c === undefined ? (COMMAND_OPERATIONS[kind] ?? kind) : kind === 'prepare' ? `PREPARE ${operationOf(c.command)}` : operationOf(c.command);
  const op: DbOperation = {
    system: 'mysql',
    operation,
    ...(c !== undefined && collectionOf(c) !== undefined ? { collection: collectionOf(c) } : {}),
    ...(session.schema ? { namespace: session.schema } : {}),
    ...(route ? { queryText: route.fingerprint.text, batchSize: c?.statementCount } : {}),
  };
  return span.describe(op, {
    'dbproxy.user': session.user,
    'dbproxy.listener': session.listener,
    ...(session.origin ? { 'client.address': session.origin.source.address, 'client.port': session.origin.source.port } : {}),
    ...(route ? { 'dbproxy.statement_hash': route.fingerprint.hash } : {}),
    // dbproxy.route is the statement's primary/replica route; the handshake route is its own attribute
    ...(session.route ? { 'dbproxy.handshake_route': session.route.route, 'dbproxy.shard': session.route.shard } : {}),
  });
}

/** The command is sent to `conn`: the CLIENT span starts (server.address/port from the epoch's backend). */
export function backendCallStarts(span: DbSpan, conn: BackendConnection, epoch: EdgeEpoch, route: string, role: string): void {
  span.setAttribute('dbproxy.route', route);
  span.setAttribute('dbproxy.role', role);
  span.setAttribute('dbproxy.backend', conn.backend);
  span.backendCall(conn.backend, epoch.backends.get(conn.backend)?.address, mysqlSystemOf(conn.serverVersion));
}

/** The backend's reply ended the command. */
export function backendReplied(span: DbSpan, rows: number, err: ErrPacket | null): void {
  span.setAttribute('dbproxy.rows', rows);
  if (err === null) return span.backendDone();
  const code = String(err.code);
  span.backendDone(code, err.message);
  span.fail(code, err.message);
}
