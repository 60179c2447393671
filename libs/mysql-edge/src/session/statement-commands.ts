// The commands a session serves: what each one needs (classification, plan, statement lookup),
// whether the edge answers it itself or runs it on a backend, and what a backend's response changes
// in the session (schema, autocommit, character set, prepared statements, read-after-write).
import { Capability, Command, ServerStatus, decodeStmtExecute, hasFlag, type MysqlPacket, type MysqlValue, type ParameterType, type ResponseSummary } from '@dbproxy/protocol-mysql';
import type { PreparedRoute, SqlRoute, SqlValue } from '@dbproxy/sql';
import { holdsTransaction, type BackendConnection } from '../backend/backend-connection';
import { MysqlEdgeErrors } from '../errors';
import type { BackendExchange, CommandKind } from './backend-exchange';
import { ChangeUserExchange } from './change-user';
import { isKill, killCommand, processKill } from './kill-command';
import { startsWithKill } from '../kill/kill-statement';
import type { ClientSession } from './client-session';
import { noteExecuteTypes } from './command-packets';
import { setOption } from './set-option';
import { executeHold, isHoldError, queryHold } from '../fanout/session-hooks';
import { planCommand, planStatement, type Plan, type PlanResult } from './route-planner';
import { StatementRegistry, type StatementSource } from './statement-registry';

export interface PendingPrepare {
  readonly id: number;
  readonly source: StatementSource;
  readonly prepared: PreparedRoute;
  readonly fixed: SqlRoute | null;
}

const CURSOR_FLAGS = 0x07; // CURSOR_TYPE_READ_ONLY | FOR_UPDATE | SCROLLABLE

/** The plan for a statement; unsharded ones are cached per classification, listener, window and replica eligibility. */
function plan(s: ClientSession, route: SqlRoute): PlanResult {
  const e = s.epoch;
  const readAfterWrite = s.readAfterWrite();
  const unsharded = route.decision.kind === 'unsharded';
  const variant = (s.listener === 'read_only' ? 1 : 0) | (readAfterWrite ? 2 : 0) | (route.replicaEligible ? 4 : 0);
  let variants = unsharded ? (e.plans.get(route.classification) as PlanResult[] | undefined) : undefined;
  const cached = variants?.[variant];
  if (cached !== undefined) return cached;
  const planned = planStatement(route, { listener: s.listener, readAfterWrite, defaultShard: e.defaultShard, multiStatements: e.multiStatements });
  if (unsharded) {
    if (variants === undefined) e.plans.set(route.classification, (variants = []));
    variants[variant] = planned;
  }
  return planned;
}

function statementId(p: MysqlPacket, min: number): number {
  if (p.payload.length < min) throw MysqlEdgeErrors.protocol(`command 0x${(p.payload[0] ?? 0).toString(16)} is too short`);
  return p.payload.readUInt32LE(1);
}

export function dispatchCommand(s: ClientSession, p: MysqlPacket): void {
  if (p.payload.length === 0) throw MysqlEdgeErrors.protocol('empty command packet');
  const command = p.payload[0] as number;
  switch (command) {
    case Command.Query:
      return query(s, p);
    case Command.StmtExecute:
      return execute(s, p);
    case Command.StmtPrepare:
      return prepare(s, p);
    case Command.StmtClose:
      return s.statements?.close(statementId(p, 5));
    case Command.StmtSendLongData:
      return longData(s, p);
    case Command.StmtReset:
      return stmtReset(s, p);
    case Command.StmtFetch:
      return fetch(s, p);
    case Command.Ping:
      return s.replyOk();
    case Command.Quit:
      return s.close('COM_QUIT', true);
    case Command.InitDb:
      return initDb(s, p);
    case Command.ResetConnection:
      s.resetState();
      return s.replyOk();
    case Command.ChangeUser:
      return ChangeUserExchange.start(s, p);
    case Command.FieldList:
    case Command.Statistics:
      return metadata(s, p, command === Command.FieldList ? 'field-list' : 'statistics');
    case Command.ProcessKill:
      return processKill(s, p);
    case Command.SetOption:
      return setOption(s, p);
    default:
      return s.fail(MysqlEdgeErrors.unknownCommand(command.toString(16).padStart(2, '0')));
  }
}

function query(s: ClientSession, p: MysqlPacket): void {
  const epoch = s.currentEpoch();
  const sql = p.payload.toString(s.encoding, 1);
  const route = epoch.router.route(sql);
  // as the server does: several statements only for a client that asked for them
  if (route.classification.statementCount > 1 && !s.has(Capability.MultiStatements)) return s.fail(MysqlEdgeErrors.multiStatementNotRequested());
  if (isKill(route.classification.command, route.classification.statementCount, sql)) return killCommand(s, sql, route.classification.statementCount);
  const planned = plan(s, route);
  if (!isPlan(planned)) return s.fail(planned);
  const ex = s.exchange();
  // fanout (src/fanout): copies of DML on fanout tables, merged SHOW WARNINGS
  const hold = queryHold(s, p, sql, route, planned, ex.pin);
  if (isHoldError(hold)) return s.fail(hold);
  ex.hold = hold;
  ex.plan = planned;
  ex.classification = route.classification;
  ex.statement = null;
  s.currentSql = sql;
  s.runOnBackend(p, 'query', route);
}

function isPlan(result: PlanResult): result is Plan {
  return 'role' in result;
}

function execute(s: ClientSession, p: MysqlPacket): void {
  const id = statementId(p, 10);
  const statement = s.statements?.get(id);
  if (!statement) return s.fail(MysqlEdgeErrors.unknownStatement(id, 'mysqld_stmt_execute'));
  if (statement.longDataError) {
    const err = statement.longDataError;
    statement.longDataError = null;
    return s.fail(err);
  }
  if (!noteExecuteTypes(p.payload, statement)) return s.fail(MysqlEdgeErrors.missingTypes(id));
  const epoch = s.currentEpoch();
  const route = statement.fixedRoute ?? epoch.router.routePrepared(statement.prepared, parameterValues(s, p, statement.paramCount, statement.types, statement.longDataParams));
  let planned = plan(s, route);
  if (!isPlan(planned)) return s.fail(planned);
  if ((p.payload[5] as number) & CURSOR_FLAGS && !s.pinned) planned = { ...planned, pin: 'cursor', reserved: planned.role === 'primary', pipelinable: false };
  const ex = s.exchange();
  // fanout (src/fanout): copies of DML on fanout tables
  const hold = executeHold(s, p, statement, route, planned, ex.pin);
  if (isHoldError(hold)) return s.fail(hold);
  ex.hold = hold;
  ex.plan = planned;
  ex.classification = route.classification;
  ex.statement = statement;
  s.runOnBackend(p, 'execute', route);
}

/** Typed parameter values for routing templates that depend on them (shard keys, SET autocommit = ?). */
function parameterValues(s: ClientSession, p: MysqlPacket, paramCount: number, types: Buffer | null, longData: ReadonlySet<number> | null): SqlValue[] {
  const previousTypes: ParameterType[] = [];
  if (types) for (let i = 0; i + 1 < types.length; i += 2) previousTypes.push({ type: types[i] as number, unsigned: ((types[i + 1] as number) & 0x80) !== 0 });
  const decoded = decodeStmtExecute(p.payload, { paramCount, capabilities: s.capabilities, previousTypes, ...(longData ? { longDataParams: longData } : {}), encoding: s.encoding });
  return decoded.params.map(toSqlValue);
}

function toSqlValue(v: MysqlValue): SqlValue {
  if (v === null || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string' || Buffer.isBuffer(v)) return v;
  return null; // temporals are never shard keys or autocommit values
}

function prepare(s: ClientSession, p: MysqlPacket): void {
  const epoch = s.currentEpoch();
  const text = p.payload.toString(s.encoding, 1);
  if (startsWithKill(text)) return s.fail(MysqlEdgeErrors.killPrepared(), 1);
  const registry = (s.statements ??= new StatementRegistry(s.edge.catalog));
  const id = registry.reserve(p.payload.length - 1, { maxStatements: epoch.limits.maxStatements, maxBytes: epoch.limits.maxStatementBytes });
  if (typeof id !== 'number') return s.fail(id);
  const prepared = epoch.router.prepare(text);
  const unbound = epoch.router.routePrepared(prepared, []);
  const c = unbound.classification;
  const fixed = unbound.decision.kind === 'unsharded' && c.transaction !== 'autocommit_on' && c.transaction !== 'autocommit_off' ? unbound : null;
  const replica = s.listener === 'read_only' || (unbound.replicaEligible && !s.readAfterWrite());
  // the client's bytes are kept as sent: a re-prepare elsewhere must not re-encode them (SET NAMES is not reflected in s.encoding)
  s.pendingPrepare = { id, source: { sql: Buffer.from(p.payload.subarray(1)), schema: s.schema, charsetKey: s.charsetKey }, prepared, fixed };
  const ex = s.exchange();
  ex.plan = { role: replica ? 'replica' : 'primary', reserved: false, pin: null, label: replica ? 'replica' : 'primary', shard: epoch.defaultShard, write: false };
  ex.classification = null;
  ex.statement = null;
  ex.prepareId = id;
  s.runOnBackend(p, 'prepare', unbound);
}

function longData(s: ClientSession, p: MysqlPacket): void {
  const statement = s.statements?.get(statementId(p, 7));
  if (!statement || !s.statements) return; // COM_STMT_SEND_LONG_DATA has no reply; the execute reports
  s.statements.appendLongData(statement, p.payload.readUInt16LE(5), p.payload, s.epoch.limits.maxStatementBytes);
}

function stmtReset(s: ClientSession, p: MysqlPacket): void {
  const id = statementId(p, 5);
  const statement = s.statements?.get(id);
  if (!statement || !s.statements) return s.fail(MysqlEdgeErrors.unknownStatement(id, 'mysqld_stmt_reset'));
  s.statements.dropLongData(statement);
  statement.longDataError = null;
  // Only a pinned connection can hold a cursor of this statement: let the backend close it.
  if (!s.pinned || !s.exchange().connection?.statements.get(statement.entry)) return s.replyOk();
  const ex = s.exchange();
  ex.classification = null;
  ex.statement = statement;
  s.runOnBackend(p, 'stmt-reset', null);
}

function fetch(s: ClientSession, p: MysqlPacket): void {
  const id = statementId(p, 9);
  const statement = s.statements?.get(id);
  if (!statement) return s.fail(MysqlEdgeErrors.unknownStatement(id, 'mysqld_stmt_fetch'));
  if (!s.pinned) return s.fail(MysqlEdgeErrors.noCursor(id));
  const ex = s.exchange();
  ex.classification = null;
  ex.statement = statement;
  s.runOnBackend(p, 'fetch', null);
}

function initDb(s: ClientSession, p: MysqlPacket): void {
  const epoch = s.currentEpoch();
  s.pendingSchema = p.payload.toString(s.encoding, 1);
  const ex = s.exchange();
  ex.plan = planCommand('schema', { listener: s.listener, readAfterWrite: s.readAfterWrite(), defaultShard: epoch.defaultShard, multiStatements: epoch.multiStatements });
  ex.classification = null;
  ex.statement = null;
  s.runOnBackend(p, 'init-db', null);
}

function metadata(s: ClientSession, p: MysqlPacket, kind: 'field-list' | 'statistics'): void {
  const epoch = s.currentEpoch();
  const ex = s.exchange();
  ex.plan = planCommand('metadata', { listener: s.listener, readAfterWrite: s.readAfterWrite(), defaultShard: epoch.defaultShard, multiStatements: epoch.multiStatements });
  ex.classification = null;
  ex.statement = null;
  s.runOnBackend(p, kind, null);
}

/** `USE name` / `USE \`name\`` → name (for connections without session tracking). */
function useTarget(sql: string): string | null {
  const m = /^\s*use\s+(`(?:[^`]|``)+`|[^\s;]+)/i.exec(sql);
  if (!m || !m[1]) return null;
  return m[1].startsWith('`') ? m[1].slice(1, -1).replace(/``/g, '`') : m[1];
}

/** What a backend response changes in the session and on the connection. */
export function applyStatementResponse(s: ClientSession, kind: CommandKind, summary: ResponseSummary, ex: BackendExchange, conn: BackendConnection): void {
  if (kind === 'execute' && ex.statement) s.statements?.dropLongData(ex.statement);
  if (summary.err !== null) {
    if (kind === 'prepare') s.pendingPrepare = null;
    return;
  }
  for (const change of summary.sessionState) {
    if (change.type !== 'schema') continue;
    s.schema = change.schema === '' ? null : change.schema;
    conn.schema = s.schema;
  }
  switch (kind) {
    case 'query':
    case 'execute':
      return afterStatement(s, summary, ex, conn);
    case 'init-db':
      s.schema = s.pendingSchema;
      conn.schema = s.schema;
      return;
    case 'prepare':
      return afterPrepare(s, summary, conn);
    default:
      return;
  }
}

function afterStatement(s: ClientSession, summary: ResponseSummary, ex: BackendExchange, conn: BackendConnection): void {
  s.autocommit = hasFlag(summary.statusFlags, ServerStatus.Autocommit);
  if (s.listener === 'read_write') noteWrites(s, ex.plan?.write === true, holdsTransaction(summary));
  const effect = ex.classification?.session;
  if (effect?.kind !== 'replay' || s.currentSql === null) return;
  if (effect.setting === 'database') {
    if (!hasFlag(conn.capabilities, Capability.SessionTrack)) {
      s.schema = useTarget(s.currentSql) ?? s.schema;
      conn.schema = s.schema;
    }
    return;
  }
  s.charsetSql = s.currentSql;
  s.charsetKey = `q:${s.currentSql}`;
  conn.charsetKey = s.charsetKey;
}

/**
 * The read-after-write window opens at a write and again when a transaction that wrote ends
 * (COMMIT, or anything that commits implicitly): a long transaction's reads right after its
 * commit go to the primary too.
 */
function noteWrites(s: ClientSession, write: boolean, inTransaction: boolean): void {
  if (write || (s.transactionWrote && !inTransaction)) s.noteWrite();
  s.transactionWrote = inTransaction && (write || s.transactionWrote);
}

function afterPrepare(s: ClientSession, summary: ResponseSummary, conn: BackendConnection): void {
  const pending = s.pendingPrepare;
  const prepared = summary.prepared;
  s.pendingPrepare = null;
  if (!pending || !prepared || !s.statements) return;
  const statement = s.statements.add(pending.id, pending.source, prepared.paramCount, pending.prepared, pending.fixed);
  conn.statements.add(statement.entry, prepared.statementId, prepared.paramCount);
}
