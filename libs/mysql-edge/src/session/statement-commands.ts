// The commands a session serves: what each one needs (classification, plan, statement lookup),
// whether the edge answers it itself or runs it on a backend, and what a backend's response changes
// in the session (schema, autocommit, character set, prepared statements, read-after-write).
import { Buffer } from 'node:buffer';
import { Capability, Command, ServerStatus, decodeStmtExecute, hasFlag, type MysqlPacket, type MysqlValue, type ResponseSummary } from '@dbproxy/protocol-mysql';
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
import { runsOnXa } from '../fanout/session-xa';
import { planCommand, planStatement, type Plan, type PlanResult } from './route-planner';
import { StatementRegistry, type ClientStatement, type StatementSource } from './statement-registry';
import type { DbproxyError } from '@dbproxy/util';
import { cachedRead, executeText, invalidationHold } from '../cache/session-cache';
import type { ResponseHold } from '../fanout/session-fanout';
import { refusalReason, shardTarget } from '../sharding/shard-target';
import { runEveryShard, type EveryShard, type EveryShardCommand } from '../sharding/every-shard-read';
import { lastGtidOf } from '../causal/causal-reads';

export interface PendingPrepare {
  readonly id: number;
  readonly source: StatementSource;
  readonly prepared: PreparedRoute;
  readonly fixed: SqlRoute | null;
}

const CURSOR_FLAGS = 0x07; // CURSOR_TYPE_READ_ONLY | FOR_UPDATE | SCROLLABLE

/**
 * The plan for a statement (or the shards of a keyless read that runs on every shard); cached per
 * classification, shard, listener, window and replica eligibility (the plan depends on nothing else
 * once the shard is resolved).
 */
function plan(s: ClientSession, route: SqlRoute): PlanResult | EveryShard {
  const e = s.epoch;
  // the session's own shard: its handshake route's ([[mysql.routes]]), else the default shard
  let shard = s.homeShard;
  // without sharding rules a user limited by users.shards still reaches only its shards
  if (e.sharding.active || (e.sharding.userShards.get(s.user)?.size ?? 0) > 0) {
    const target = shardOnSession(s, route);
    if (!('kind' in target)) return refuse(s, target);
    if (target.kind === 'all') return target;
    shard = target.shard;
  }
  const slot = e.shardSlots.get(shard) ?? -1;
  const readAfterWrite = s.windowOpen(shard);
  const cacheable = slot >= 0;
  const variant = 8 * slot + ((s.listener === 'read_only' ? 1 : 0) | (readAfterWrite ? 2 : 0) | (route.replicaEligible ? 4 : 0));
  let variants = cacheable ? (e.plans.get(route.classification) as PlanResult[] | undefined) : undefined;
  const cached = variants?.[variant];
  if (cached !== undefined) return cached;
  const planned = planStatement(route, { listener: s.listener, readAfterWrite, defaultShard: s.homeShard, multiStatements: e.multiStatements, shard });
  if (cacheable) {
    if (variants === undefined) e.plans.set(route.classification, (variants = []));
    variants[variant] = planned;
  }
  return planned;
}

/** A refusal by shard routing: counted by reason, then the client's ERR. */
function refuse(s: ClientSession, err: DbproxyError): DbproxyError {
  s.edge.metrics.shardRefusals.inc({ reason: refusalReason(err.code) });
  return err;
}

/**
 * The shard target of a statement on this session: a pinned session (transaction, session state)
 * stays on its shard, so a statement routed elsewhere is refused; users.shards limits the rest.
 */
function shardOnSession(s: ClientSession, route: SqlRoute): DbproxyError | { kind: 'one'; shard: string } | EveryShard {
  const e = s.epoch;
  const target = shardTarget(route, s.homeShard, e.sharding);
  if (target.kind === 'refused') return target.error;
  const ex = s.runningExchange();
  const pinShard = s.pinned && ex !== null ? ex.pinShard : null;
  if (target.kind === 'all') {
    if (pinShard !== null || s.pendingBegin !== null) return MysqlEdgeErrors.shardTransaction('every shard (a keyless read)', pinShard ?? 'of its first statement');
    for (const shard of target.shards) if (!userReaches(s, shard)) return MysqlEdgeErrors.shardDenied(s.user, shard);
    return { kind: 'all', shards: target.shards };
  }
  let shard = target.shard;
  if (pinShard !== null) {
    if (target.follows) shard = pinShard;
    else if (shard !== pinShard) return MysqlEdgeErrors.shardTransaction(shard, pinShard);
  } else if (target.follows && route.classification.tables.length === 0 && !userReaches(s, shard)) {
    // a statement that reads no table (SELECT 1, @@version) runs on a shard the user may reach
    shard = [...(e.sharding.userShards.get(s.user) as ReadonlySet<string>)][0] as string;
  }
  if (!userReaches(s, shard)) return MysqlEdgeErrors.shardDenied(s.user, shard);
  return { kind: 'one', shard };
}

function userReaches(s: ClientSession, shard: string): boolean {
  const allowed = s.epoch.sharding.userShards.get(s.user);
  return allowed === undefined || allowed.size === 0 || allowed.has(shard);
}

/** A transaction opener the edge holds until the next statement, which then holds the transaction on its shard's primary. */
function withOpener(s: ClientSession, planned: Plan): Plan {
  if (s.pendingBegin === null || s.pinned) return planned;
  if (s.listener === 'read_only') return { ...planned, pin: planned.pin ?? 'transaction', pipelinable: false };
  return { ...planned, role: 'primary', reserved: true, pin: planned.pin ?? 'transaction', label: 'primary', pipelinable: false };
}

/**
 * With sharding, BEGIN is answered by the edge and sent later with the transaction's first
 * statement, on that statement's shard; a COMMIT or ROLLBACK of a transaction that ran nothing is
 * answered too. True when the edge answered.
 */
function deferredTransaction(s: ClientSession, route: SqlRoute, sql: string): boolean {
  const c = route.classification;
  if (!s.epoch.sharding.active || s.pinned || c.statementCount !== 1) return false;
  if (c.transaction === 'begin') {
    s.pendingBegin = sql;
    s.replyOk();
    return true;
  }
  if (s.pendingBegin !== null && (c.transaction === 'commit' || c.transaction === 'rollback')) {
    s.pendingBegin = null;
    s.replyOk();
    return true;
  }
  return false;
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
      // the client answers the greeting's scramble, which the backend never issued: it cannot check it
      if (s.passthroughAuth) return s.fatal(MysqlEdgeErrors.passthroughChangeUser(), s.replySeq);
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
  if (deferredTransaction(s, route, sql)) return;
  const planned = plan(s, route);
  if (isEveryShard(planned)) return readEveryShard(s, { kind: 'query', packet: p }, route, planned.shards);
  if (!isPlan(planned)) return s.fail(planned);
  const opened = withOpener(s, planned);
  // the result cache (src/cache): a hit is answered without a backend, a miss runs through runQuery
  if (s.edge.cache.configured && cachedRead(s, route, { text: sql, schema: s.schema }, opened, (cachePlan, fill) => runQuery(s, p, sql, route, cachePlan, fill))) return;
  runQuery(s, p, sql, route, opened, null);
}

function runQuery(s: ClientSession, p: MysqlPacket, sql: string, route: SqlRoute, opened: Plan, fill: ResponseHold | null): void {
  const ex = s.exchange();
  // fanout mode = "xa" (src/fanout/session-xa.ts): answered through the xa-coordinator, not run here
  if (runsOnXa(s, { kind: 'query', sql }, route, opened.shard, ex.pin)) return;
  // fanout (src/fanout): copies of DML on fanout tables, merged SHOW WARNINGS
  const hold = queryHold(s, p, sql, route, opened, ex.pin);
  if (isHoldError(hold)) return s.fail(hold);
  // a fill needs the response to itself; writes to cached tables wait for their generation bump
  ex.hold = fill !== null && hold === null ? fill : invalidationHold(s, route.classification, hold);
  if (fill !== null && hold !== null) fill.abandon?.();
  ex.plan = opened;
  ex.beginPrelude = s.pinned ? null : s.pendingBegin;
  ex.classification = route.classification;
  ex.statement = null;
  s.currentSql = sql;
  s.runOnBackend(p, 'query', route);
}

/** A keyless read under multi_shard = "all_shards": on every shard, rows concatenated (sharding/every-shard-read.ts). */
function readEveryShard(s: ClientSession, command: EveryShardCommand, route: SqlRoute, shards: readonly string[]): void {
  s.edge.metrics.allShardReads.inc();
  s.currentSql = null;
  s.transition('exchanging', `every shard: ${route.fingerprint.hash}`);
  s.deadline = Date.now() + s.epoch.limits.queryTimeoutMs;
  runEveryShard(s, command, shards, s.replySeq).catch((err: unknown) => {
    if (s.state === 'closed') return;
    s.fail(err);
    s.commandDone(false);
  });
}

function isPlan(result: PlanResult | EveryShard): result is Plan {
  return 'role' in result;
}

function isEveryShard(result: PlanResult | EveryShard): result is EveryShard {
  return 'kind' in result && result.kind === 'all';
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
  const route = statement.fixedRoute ?? epoch.router.routePrepared(statement.prepared, parameterValues(s, p, statement));
  const result = plan(s, route);
  if (isEveryShard(result)) {
    // a cursor or long data would hold one shard's connection: not merged
    if ((p.payload[5] as number) & CURSOR_FLAGS || statement.longData !== null) return s.fail(refuse(s, MysqlEdgeErrors.shardMerge(result.shards.join(', '), 'a cursor or long data; execute without them')));
    return readEveryShard(s, { kind: 'execute', packet: p, statement }, route, result.shards);
  }
  if (!isPlan(result)) return s.fail(result);
  let planned = withOpener(s, result);
  if ((p.payload[5] as number) & CURSOR_FLAGS && !s.pinned) planned = { ...planned, pin: 'cursor', reserved: planned.role === 'primary', pipelinable: false };
  // the result cache (src/cache): executions with the same parameters share an entry
  if (s.edge.cache.configured) {
    const command = { text: () => executeText(p.payload, statement), schema: statement.entry.schema };
    if (cachedRead(s, route, command, planned, (cachePlan, fill) => runExecute(s, p, statement, route, cachePlan, fill))) return;
  }
  runExecute(s, p, statement, route, planned, null);
}

function runExecute(s: ClientSession, p: MysqlPacket, statement: ClientStatement, route: SqlRoute, planned: Plan, fill: ResponseHold | null): void {
  const ex = s.exchange();
  if (runsOnXa(s, { kind: 'execute', packet: p, statement }, route, planned.shard, ex.pin)) return;
  // fanout (src/fanout): copies of DML on fanout tables
  const hold = executeHold(s, p, statement, route, planned, ex.pin);
  if (isHoldError(hold)) return s.fail(hold);
  ex.hold = fill !== null && hold === null ? fill : invalidationHold(s, route.classification, hold);
  if (fill !== null && hold !== null) fill.abandon?.();
  ex.plan = planned;
  ex.beginPrelude = s.pinned ? null : s.pendingBegin;
  ex.classification = route.classification;
  ex.statement = statement;
  s.runOnBackend(p, 'execute', route);
}

/**
 * Typed parameter values for routing templates that depend on them (shard keys, SET autocommit = ?):
 * only the leading ones routing reads are decoded (a long string or blob parameter after the shard
 * key costs nothing), with the statement's previous parameter types kept until its types change.
 */
function parameterValues(s: ClientSession, p: MysqlPacket, statement: ClientStatement): SqlValue[] {
  const valueCount = statement.prepared.routingParameters;
  if (valueCount === 0) return [];
  const types = statement.types;
  let previousTypes = statement.previousTypes;
  if (previousTypes === null || statement.previousTypesOf !== types) {
    previousTypes = [];
    if (types) for (let i = 0; i + 1 < types.length; i += 2) previousTypes.push({ type: types[i] as number, unsigned: ((types[i + 1] as number) & 0x80) !== 0 });
    statement.previousTypes = previousTypes;
    statement.previousTypesOf = types;
  }
  const longDataParams = statement.longDataParams ?? undefined;
  const decoded = decodeStmtExecute(p.payload, { paramCount: statement.paramCount, capabilities: s.capabilities, previousTypes, longDataParams, encoding: s.encoding, valueCount });
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
  const shard = prepareShard(s);
  const replica = s.listener === 'read_only' || (unbound.replicaEligible && !s.readAfterWrite(shard));
  // the client's bytes are kept as sent: a re-prepare elsewhere must not re-encode them (SET NAMES is not reflected in s.encoding)
  s.pendingPrepare = { id, source: { sql: Buffer.from(p.payload.subarray(1)), schema: s.schema, charsetKey: s.charsetKey }, prepared, fixed };
  const ex = s.exchange();
  ex.plan = { role: replica ? 'replica' : 'primary', reserved: false, pin: null, label: replica ? 'replica' : 'primary', shard, write: false };
  ex.classification = null;
  ex.statement = null;
  ex.prepareId = id;
  s.runOnBackend(p, 'prepare', unbound);
}

/**
 * Where COM_STMT_PREPARE runs (for its metadata; every execute prepares the statement again lazily
 * on the shard it routes to): the default shard, or one the user may reach.
 */
function prepareShard(s: ClientSession): string {
  const e = s.epoch;
  if (userReaches(s, s.homeShard)) return s.homeShard;
  return [...(e.sharding.userShards.get(s.user) as ReadonlySet<string>)][0] as string;
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
  ex.plan = planCommand('schema', { listener: s.listener, readAfterWrite: s.readAfterWrite(s.homeShard), defaultShard: s.homeShard, multiStatements: epoch.multiStatements, shard: prepareShard(s) });
  ex.classification = null;
  ex.statement = null;
  s.runOnBackend(p, 'init-db', null);
}

function metadata(s: ClientSession, p: MysqlPacket, kind: 'field-list' | 'statistics'): void {
  const epoch = s.currentEpoch();
  const ex = s.exchange();
  ex.plan = planCommand('metadata', { listener: s.listener, readAfterWrite: s.readAfterWrite(s.homeShard), defaultShard: s.homeShard, multiStatements: epoch.multiStatements, shard: prepareShard(s) });
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
  const inTransaction = holdsTransaction(summary);
  // causal reads: the OK of an autocommit write or COMMIT carries the GTID it committed as
  const committed = s.epoch.limits.causal && !inTransaction ? lastGtidOf(summary) : null;
  if (committed !== null) s.noteCommit(ex.shard, committed);
  else if (s.listener === 'read_write') noteWrites(s, ex.shard, ex.plan?.write === true, inTransaction);
  if (committed !== null) s.transactionWrote = false;
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
function noteWrites(s: ClientSession, shard: string, write: boolean, inTransaction: boolean): void {
  if (write || (s.transactionWrote && !inTransaction)) s.noteWrite(shard);
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
