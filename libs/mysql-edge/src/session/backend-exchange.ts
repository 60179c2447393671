// Running one client command on a backend connection: borrow (or reuse the pinned) connection,
// replay the session's schema and character set when the connection differs, prepare a statement
// lazily where an execute lands, forward the response as it streams, then decide what the
// connection is now: released (reset if needed), pinned, parked, or lost. With pipeline_depth > 1
// an autocommit read may instead share a lent connection with other sessions' reads (pipelines.ts).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import type { DbSpan } from '@dbproxy/observability';
import { pipelines, type Lease } from '@dbproxy/pool';
import type { ProxiedAddresses } from '@dbproxy/runtime';
import { ParkedLeases, type ConnectionPool, type ParkedHolder } from '../backend/parked-leases';
import type { SharedLending } from '../backend/pipelines';
import { Command, ServerStatus, hasFlag, type ErrPacket, type MysqlPacket, type ResponseSummary } from '@dbproxy/protocol-mysql';
import type { Classification } from '@dbproxy/sql';
import { DbproxyError } from '@dbproxy/util';
import { Mode, holdsTransaction, queryPacket, type BackendConnection, type ResponseSink, type ServerFarewell } from '../backend/backend-connection';
import { lastFrameSeq } from '../backend/frame-seq';
import type { EdgeContext } from '../edge-context';
import type { EdgeEpoch } from '../epoch';
import { MysqlEdgeErrors, toMysqlError, type MysqlError } from '../errors';
import { executeFor, initDbPacket, longDataPacket, preparePacket, statementPacket, withStatementId } from './command-packets';
import { leavesStatementValues, leavesUntrackedState, type PinCause, type Plan } from './route-planner';
import type { ClientStatement } from './statement-registry';
import { backendCallStarts, backendReplied } from './statement-span';
import type { BackendThread } from '../kill/kill-switch';
import type { ResponseHold } from '../fanout/session-fanout';
import { StatementTiming } from './statement-timing';
import { onlyLastGtid, waitOutcome, waitQuery } from '../causal/causal-reads';
import type { GtidPosition } from '../causal/gtid-position';
import type { QueryCell } from '../metrics';

export type CommandKind = 'query' | 'execute' | 'prepare' | 'field-list' | 'statistics' | 'init-db' | 'fetch' | 'stmt-reset';

/** What the exchange needs from its session. */
export interface ExchangeOwner {
  readonly edge: EdgeContext;
  /** The listener the session came in on (label of the latency histograms). */
  readonly listener: string;
  readonly epoch: EdgeEpoch;
  readonly profile: number;
  /** The client's addresses (a PROXY header's when the client came through a load balancer): a backend with proxy_protocol is told them. */
  readonly origin?: ProxiedAddresses;
  readonly schema: string | null;
  readonly charsetKey: string;
  charsetStatement(): string;
  deliver(slices: Buffer[], conn: BackendConnection): void;
  sendError(err: MysqlError, seq: number): void;
  /** The command ended and its response is out; `fatal` closes the session. */
  commandDone(fatal: boolean): void;
  /** Waiting for a pool connection (state `routing`). */
  waiting(): void;
  /** The pinned connection died between statements: the client gets `err` (with sequence id `seq`) and the session closes. */
  pinnedConnectionLost(err: MysqlError, seq: number): void;
  /** A response held back by fanout (src/fanout), as the client gets it. */
  sendHeld(response: Buffer): void;
  /** The server asked for a LOAD DATA LOCAL file (request `requestSeq` forwarded): the client's next packets are the file. */
  startUpload(conn: BackendConnection, requestSeq: number): void;
  /** Causal reads: the position a replica must have applied to serve this session's read on `shard` (null: none). */
  causalTarget(shard: string): GtidPosition | null;
  /** What the response changed: schema, autocommit, character set, statements... */
  applyResponse(kind: CommandKind, summary: ResponseSummary, exchange: BackendExchange, conn: BackendConnection): void;
}

const TAG_MAIN = 1;
const TAG_SCHEMA = 2;
/** Where a session without a database runs on a connection another client left in one. */
const NEUTRAL_SCHEMA = 'information_schema';
const TAG_CHARSET = 3;
const TAG_PREPARE = 4;
const TAG_BEGIN = 5;
const TAG_CAUSAL = 6;
const TRANSACTIONAL: ReadonlySet<PinCause> = new Set(['transaction', 'autocommit', 'implicit_transaction']);

export class BackendExchange implements ResponseSink, ParkedHolder {
  private lease: Lease<BackendConnection> | null = null;
  private conn: BackendConnection | null = null;
  /** The shared lending the command runs on (pipelined reads); its lease is then not `lease`. */
  private lending: SharedLending | null = null;
  /** Why the session holds its connection across statements; null when it borrows per statement. */
  pin: PinCause | null = null;
  /** The epoch the pinned session keeps until the pin ends. */
  pinnedEpoch: EdgeEpoch | null = null;
  /** The shard of the pinned connection (meaningful while `pin` is set): statements routed elsewhere are refused. */
  pinShard: string | null = null;
  /** The shard the current (or last) command runs on. */
  shard = '';
  /** A transaction opener the edge answered itself (sharding): sent before the command, which then holds the transaction. */
  beginPrelude: string | null = null;
  /** The command's transaction opener ran: the transaction is open whatever the command itself answers. */
  private opened = false;
  /** The server said a transaction is open (or autocommit off) after the last statement. */
  private inTransaction = false;
  kind: CommandKind = 'query';
  private packet: MysqlPacket | null = null;
  plan: Plan | null = null;
  classification: Classification | null = null;
  statement: ClientStatement | null = null;
  /** Fanout (src/fanout): the response is held until its copies ran (or merged with the edge's warnings); set per command. */
  hold: ResponseHold | null = null;
  /** Client id a forwarded prepare response is rewritten to. */
  prepareId = -1;
  private pendingPreludes = 0;
  private preludeError: ErrPacket | null = null;
  private schemaSent: string | null = null;
  private charsetSent = '';
  private fellBack = false;
  /** Role of the backend the command runs on (the pinned one's while pinned). */
  private role: 'primary' | 'replica' = 'primary';
  private waiter: AbortController | null = null;
  /** Causal reads: the position the chosen replica must reach before the command runs there (MASTER_GTID_WAIT first). */
  private causalWait: GtidPosition | null = null;
  private causalWaitStarted = 0;
  /** The wait timed out: the command goes to the primary instead. */
  private causalMissed = false;
  private span: DbSpan | null = null;
  private readonly parts: Buffer[] = [];
  /** The pool of the clean connection kept between statements (see ParkedLeases); null when none. */
  private parkedPool: ConnectionPool | null = null;
  parkedAt = 0;
  private readonly pressureOf = (backend: string): number => this.owner.edge.pools.pressure(backend, this.owner.profile, this.owner.origin);
  private readonly timing: StatementTiming;
  /** The query counter of the last (route, role, backend) this session counted in (see countQuery). */
  private queryCell: QueryCell | null = null;
  private queryLabel = '';
  private queryBackend = '';
  private queryRole: 'primary' | 'replica' = 'primary';
  /** The connection is the session's own (auth passthrough): never pooled, closed with the session. */
  private dedicated = false;

  constructor(private readonly owner: ExchangeOwner) {
    this.timing = new StatementTiming(owner.edge.metrics.latency, owner.listener);
  }

  get connection(): BackendConnection | null {
    return this.conn;
  }

  /** The server said a transaction is open after the last statement (what a passthrough pin does not say). */
  get transactionOpen(): boolean {
    return this.inTransaction;
  }

  get busy(): boolean {
    return this.packet !== null;
  }

  /** Runs one command. The caller filled kind, plan, classification and statement. */
  run(packet: MysqlPacket, span: DbSpan | null): void {
    this.packet = packet;
    this.span = span;
    this.timing.received();
    this.fellBack = false;
    this.opened = false;
    this.causalWait = null;
    this.causalMissed = false;
    if (this.pin !== null && this.conn !== null) {
      this.shard = this.pinShard ?? this.shard;
      return this.begin();
    }
    this.shard = (this.plan as Plan).shard;
    this.acquire(this.plan as Plan);
  }

  private acquire(plan: Plan): void {
    const owner = this.owner;
    const edge = owner.edge;
    const directory = owner.epoch.directory;
    const fallback = owner.epoch.fallbackToPrimary && !this.fellBack;
    const backend = directory.choose(plan.shard, plan.role, fallback, this.pressureOf, edge.clock.now, this.caughtUp(plan));
    if (backend === undefined) return this.fail(directory.unusable(plan.shard, plan.role, fallback, edge.clock.now), -1);
    if (directory.fellBack) {
      this.fellBack = true;
      edge.queries.noReplicaFallbacks++;
    }
    this.role = backend.role === 'replica' ? 'replica' : 'primary';
    if (plan.role === 'replica' && owner.listener === 'read_write') this.checkCausal(plan.shard, backend.name);
    const pool = edge.pools.pool(backend.name, owner.profile, owner.origin);
    if (pool === undefined) return this.fail(MysqlEdgeErrors.noBackend(plan.role, plan.shard, `backend "${backend.name}" is not in configuration epoch ${owner.epoch.epoch}`), -1);
    this.borrow(pool, plan);
  }

  /** A connection of `pool`: the one parked by this session, an idle one, a parked one taken over, a shared lending, or the next one freed. */
  private borrow(pool: ConnectionPool, plan: Plan): void {
    const owner = this.owner;
    const edge = owner.edge;
    if (this.parkedPool !== null) {
      if (this.parkedPool === pool && (this.conn as BackendConnection).alive && !(this.lease as Lease<BackendConnection>).retiring) {
        edge.parked.unpark(pool, this);
        this.parkedPool = null;
        return this.begin();
      }
      this.giveBack('parked-elsewhere');
    }
    const reserved = plan.reserved && this.role === 'primary';
    const lease = pool.tryAcquire(reserved ? RESERVED : ORDINARY) ?? edge.parked.steal(pool, this);
    if (lease !== undefined) {
      this.lease = lease;
      this.conn = lease.connection;
      return this.begin();
    }
    const depth = owner.epoch.limits.pipelineDepth;
    const lending = pipelines(depth) && plan.pipelinable === true && this.causalWait === null ? edge.pipelines.join(pool, depth, this.fits) : undefined;
    if (lending !== undefined) {
      this.lending = lending;
      this.conn = lending.connection;
      edge.queries.pipelined++;
      return this.begin();
    }
    owner.waiting();
    this.span?.poolWait(pool.backend);
    const waiter = (this.waiter = new AbortController());
    pool.acquire({ reserved, signal: waiter.signal }).then(
      (granted) => {
        this.waiter = null;
        if (this.packet === null) return void granted.pool.release(granted, { reusable: true });
        this.lease = granted;
        this.conn = granted.connection;
        edge.queries.waits++;
        edge.queries.waitSeconds += granted.waitMs / 1000;
        this.timing.waited(granted.waitMs);
        this.begin();
      },
      (err: unknown) => {
        this.waiter = null;
        if (this.packet === null) return;
        if (plan.role === 'replica' && !this.fellBack && owner.epoch.fallbackToPrimary && isConnectFailure(err)) {
          owner.epoch.directory.markFailed(pool.backend, edge.clock.now);
          this.fellBack = true;
          edge.queries.unreachableReplicaFallbacks++;
          return this.acquire({ ...plan, role: 'primary', reserved: false, label: 'fallback' });
        }
        this.fail(err instanceof DbproxyError ? err : MysqlEdgeErrors.backendConnect(pool.backend, String(err)), -1);
      },
    );
  }

  /** Causal reads among several replicas: those known (topology's checks, earlier waits) to have applied the session's write. */
  private caughtUp(plan: Plan): ((backend: string) => boolean) | undefined {
    if (plan.role !== 'replica' || this.owner.listener !== 'read_write' || (this.kind !== 'query' && this.kind !== 'execute')) return undefined;
    const target = this.owner.causalTarget(plan.shard);
    if (target === null) return undefined;
    const causal = this.owner.edge.causal;
    return (backend) => causal.known(backend, target);
  }

  /**
   * Causal reads: a replica read of a session that wrote on the shard runs at once when this process
   * knows the replica applied the write, else after a MASTER_GTID_WAIT prelude; a read the
   * directory sent to the primary (no usable replica) counts as served there.
   */
  private checkCausal(shard: string, backend: string): void {
    if (this.kind !== 'query' && this.kind !== 'execute') return;
    const target = this.owner.causalTarget(shard);
    if (target === null) return;
    const causal = this.owner.edge.causal;
    if (this.role !== 'replica') causal.count('primary');
    else if (causal.known(backend, target)) causal.count('replica_now');
    else this.causalWait = target;
  }

  /** A lending this command can join: its connection open, nothing to replay, its statement prepared there. */
  private readonly fits = (lending: SharedLending): boolean => {
    const conn = lending.connection;
    const owner = this.owner;
    if (!conn.alive || conn.needsReset || conn.paused || conn.charsetKey !== owner.charsetKey || conn.schema !== owner.schema) return false;
    if (this.kind === 'query') return true;
    const statement = this.statement;
    return this.kind === 'execute' && statement !== null && statement.longData === null && conn.statements.get(statement.entry) !== undefined;
  };

  /** Connection in hand: replay settings that differ, then the command itself. */
  private begin(): void {
    const conn = this.conn as BackendConnection;
    const owner = this.owner;
    if (!conn.alive) return this.fail(MysqlEdgeErrors.backendLost(conn.backend, 'connection already closed'), -1);
    let schema = this.schemaFor(conn);
    // MariaDB cannot unselect a database (COM_RESET_CONNECTION keeps it): a session without one is
    // moved off the database another client left, to information_schema (as ProxySQL's default_schema)
    if (schema === null && conn.schema !== null && conn.schema !== NEUTRAL_SCHEMA && !this.selectsSchema()) schema = NEUTRAL_SCHEMA;
    if (this.pin === null) conn.attach(this, 'lend');
    const label = this.pin !== null ? 'pinned' : this.fellBack ? 'fallback' : (this.plan as Plan).label;
    this.countQuery(label, conn.backend);
    this.timing.sent(label, conn.backend);
    if (this.span !== null) {
      this.span.setAttribute('dbproxy.pool_wait_ms', this.lease?.waitMs ?? 0);
      backendCallStarts(this.span, conn, owner.epoch, label, this.role);
    }
    const parts = this.parts;
    while (parts.length > 0) parts.pop(); // not `length = 0`: a runtime call that drops the storage too
    const closing = conn.statements.closing;
    if (closing.length > 0) {
      for (const id of closing) parts.push(statementPacket(Command.StmtClose, id));
      closing.length = 0;
    }
    this.pendingPreludes = 0;
    this.preludeError = null;
    if (schema !== null && conn.schema !== schema && this.kind !== 'init-db') {
      parts.push(initDbPacket(schema));
      conn.expect(Command.InitDb, Mode.Swallow, TAG_SCHEMA, this);
      this.schemaSent = schema;
      this.pendingPreludes++;
    }
    if (conn.charsetKey !== owner.charsetKey) {
      parts.push(queryPacket(owner.charsetStatement()));
      conn.expect(Command.Query, Mode.Swallow, TAG_CHARSET, this);
      this.charsetSent = owner.charsetKey;
      this.pendingPreludes++;
    }
    if (this.beginPrelude !== null) {
      parts.push(queryPacket(this.beginPrelude));
      conn.expect(Command.Query, Mode.Swallow, TAG_BEGIN, this);
      this.beginPrelude = null;
      this.pendingPreludes++;
    }
    if (this.causalWait !== null) {
      parts.push(queryPacket(waitQuery(this.causalWait, owner.epoch.limits.causalWaitMs)));
      conn.expect(Command.Query, Mode.Swallow, TAG_CAUSAL, this);
      this.causalWaitStarted = performance.now();
      this.pendingPreludes++;
    }
    if (this.pendingPreludes > 0) return this.flush(conn);
    this.sendMain(conn);
  }

  /** Counts the command in dbproxy_mysql_queries_total through the counter of the last (route, role, backend) when it is the same. */
  private countQuery(label: string, backend: string): void {
    if (this.queryCell === null || label !== this.queryLabel || backend !== this.queryBackend || this.role !== this.queryRole) {
      this.queryCell = this.owner.edge.queries.cell(label, this.role, backend);
      this.queryLabel = label;
      this.queryBackend = backend;
      this.queryRole = this.role;
    }
    this.queryCell.count++;
  }

  /**
   * The default database the command needs on `conn`: the session's, except for an execute whose
   * statement must first be prepared there: MariaDB binds a statement to the database current when
   * it is prepared, so it is prepared in the one the client prepared it in.
   */
  private schemaFor(conn: BackendConnection): string | null {
    const statement = this.statement;
    if (this.kind === 'execute' && statement !== null && conn.statements.get(statement.entry) === undefined) return statement.entry.schema;
    return this.owner.schema;
  }

  /** The command selects a database itself (COM_INIT_DB, USE): whichever one the connection has does not matter. */
  private selectsSchema(): boolean {
    if (this.kind === 'init-db') return true;
    const effect = this.classification?.session;
    return effect?.kind === 'replay' && effect.setting === 'database';
  }

  private flush(conn: BackendConnection): void {
    const parts = this.parts;
    conn.writev(parts);
    while (parts.length > 0) parts.pop();
  }

  private sendMain(conn: BackendConnection): void {
    const packet = this.packet as MysqlPacket;
    const parts = this.parts;
    switch (this.kind) {
      case 'execute': {
        const statement = this.statement as ClientStatement;
        const bs = conn.statements.get(statement.entry);
        if (bs === undefined) {
          const prepare = preparePacket(statement.entry.sql);
          parts.push(prepare);
          conn.expect(Command.StmtPrepare, Mode.Swallow, TAG_PREPARE, this, lastFrameSeq(prepare));
          return this.flush(conn);
        }
        if (statement.longData) {
          for (const payload of statement.longData) parts.push(longDataPacket(payload, bs.id));
          conn.dirty = true;
        }
        parts.push(executeFor(packet, statement, bs));
        break;
      }
      case 'fetch':
      case 'stmt-reset': {
        const bs = conn.statements.get((this.statement as ClientStatement).entry);
        if (bs === undefined) return this.fail(MysqlEdgeErrors.noCursor((this.statement as ClientStatement).id), -1, false);
        parts.push(withStatementId(packet, bs.id));
        break;
      }
      case 'prepare':
        conn.rewriteStatementId = this.prepareId;
        parts.push(packet.wire);
        break;
      default:
        parts.push(packet.wire);
    }
    // a command of several frames is answered after its last: the client's, when the edge rebuilt it
    conn.expect(packet.payload[0] as number, Mode.Forward, TAG_MAIN, this, lastFrameSeq(parts[parts.length - 1] as Buffer), packet.lastSequenceId);
    if (this.lease !== null && this.plan?.pipelinable === true && this.pin === null && this.opensLending(this.lease)) {
      this.lending = this.owner.edge.pipelines.open(this.lease);
      this.lease = null;
    }
    this.flush(conn);
  }

  /**
   * Whether this read's connection is offered to joiners: always with a fixed depth above 1; with
   * "auto" only when the pool is full now (nobody can wait, so nobody joins, before it is), so an
   * uncontended read keeps its lease to itself (and KILL finds it as a session's own).
   */
  private opensLending(lease: Lease<BackendConnection>): boolean {
    const setting = this.owner.epoch.limits.pipelineDepth;
    return setting === 'auto' ? lease.pool.saturated : pipelines(setting);
  }

  /** Sequence id of a reply that starts the response: after the client's command (of several frames from 16 MiB - 1 bytes on). */
  private replySeq(): number {
    return this.packet === null ? 1 : (this.packet.lastSequenceId + 1) & 0xff;
  }

  deliver(slices: Buffer[]): void {
    const hold = this.hold;
    if (hold !== null) {
      for (const slice of slices) hold.slices.push(Buffer.from(slice));
      return;
    }
    this.owner.deliver(slices, this.conn as BackendConnection);
  }

  localInfile(conn: BackendConnection, requestSeq: number): boolean {
    if (this.kind !== 'query' && this.kind !== 'execute') return false;
    this.owner.startUpload(conn, requestSeq);
    return true;
  }

  responseEnd(tag: number, summary: ResponseSummary): void {
    const conn = this.conn as BackendConnection;
    // a setup response that ended just before the connection failed: the command itself cannot run
    if (tag !== TAG_MAIN && !conn.alive) return this.connectionFailed(MysqlEdgeErrors.backendLost(conn.backend, 'connection closed before the statement was sent'), -1);
    switch (tag) {
      case TAG_MAIN:
        return this.complete(conn, summary);
      case TAG_PREPARE: {
        if (summary.err) return this.forwardError(summary.err);
        const prepared = summary.prepared;
        if (!prepared) return this.fail(MysqlEdgeErrors.backendProtocol(conn.backend, 'prepare answered without a statement'), -1);
        conn.statements.add((this.statement as ClientStatement).entry, prepared.statementId, prepared.paramCount);
        return this.sendMain(conn);
      }
      default:
        return this.preludeDone(conn, tag, summary);
    }
  }

  private preludeDone(conn: BackendConnection, tag: number, summary: ResponseSummary): void {
    if (tag === TAG_CAUSAL) this.causalWaited(conn, summary);
    else if (summary.err) this.preludeError ??= summary.err;
    else if (tag === TAG_SCHEMA) conn.schema = this.schemaSent;
    else if (tag === TAG_CHARSET) conn.charsetKey = this.charsetSent;
    else if (tag === TAG_BEGIN) this.inTransaction = this.opened = true;
    if (--this.pendingPreludes > 0) return;
    if (this.preludeError) return this.forwardError(this.preludeError);
    if (this.causalMissed) return this.causalFallback();
    this.sendMain(conn);
  }

  /** The replica answered the wait: it has the session's write (now or after waiting), or the read goes to the primary (timeout, or an error such as a replica without GTIDs). */
  private causalWaited(conn: BackendConnection, summary: ResponseSummary): void {
    const target = this.causalWait as GtidPosition;
    this.causalWait = null;
    // a KILL QUERY of the session ended the wait: the client gets the kill's error, not the primary's answer
    if (summary.err && conn.interrupted) return void (this.preludeError ??= summary.err);
    const outcome = summary.err ? 'primary' : waitOutcome(summary.rows);
    const causal = this.owner.edge.causal;
    causal.count(outcome);
    if (outcome !== 'replica_now') causal.waited(outcome, (performance.now() - this.causalWaitStarted) / 1000);
    if (outcome === 'primary') this.causalMissed = true;
    else causal.learned(conn.backend, target);
  }

  /** The replica did not catch up within causal_wait_ms: its connection goes back (clean), the primary serves the read. */
  private causalFallback(): void {
    const plan = this.plan as Plan;
    this.release(true, 'causal-wait-timeout');
    this.acquire({ ...plan, role: 'primary', reserved: false, label: 'read_after_write' });
  }

  /** A backend ERR the client must see instead of its command's response. */
  private forwardError(err: ErrPacket): void {
    this.timing.answered();
    this.owner.edge.metrics.errors.inc({ code: String(err.code) });
    if (this.span !== null) backendReplied(this.span, 0, err);
    this.owner.sendError({ code: err.code, sqlState: err.sqlState ?? 'HY000', message: err.message }, this.replySeq());
    this.finish(false, null);
  }

  private complete(conn: BackendConnection, summary: ResponseSummary): void {
    this.timing.answered();
    conn.rewriteStatementId = -1;
    const ok = summary.err === null;
    const c = this.classification;
    const kind = this.kind;
    // the server flags tracked variables it changed: replayed settings and autocommit (a transaction matter) are the edge's to track
    if (c !== null && (leavesUntrackedState(c) || (c.session.kind !== 'replay' && c.family !== 'transaction' && hasFlag(summary.statusFlags, ServerStatus.SessionStateChanged) && !onlyLastGtid(summary)))) conn.dirty = true;
    if (c !== null && leavesStatementValues(c)) conn.statementValues = true;
    this.owner.applyResponse(kind, summary, this, conn);
    if (!ok) this.owner.edge.metrics.errors.inc({ code: String((summary.err as ErrPacket).code) });
    if (this.span !== null) backendReplied(this.span, summary.rows, summary.err);
    const holds = (kind === 'query' || kind === 'execute') && holdsTransaction(summary);
    // a shared connection is never pinned: should a pipelined read leave a transaction open, it is
    // closed once free (one left dirty is joined by nobody and reset when it goes back to the pool)
    if (this.lending !== null) {
      if (holds) this.owner.edge.pipelines.retire(this.lending);
    } else this.updatePin(ok, holds);
    // fanout: the connection is settled now, the client answered once the copies ran
    const hold = this.hold;
    this.hold = null;
    this.finish(false, null, hold?.settle(summary, holds));
  }

  /** Pins start with statements that need them, or when the server says a transaction is open; transactional pins end when it no longer is. */
  private updatePin(ok: boolean, holds: boolean): void {
    const wanted = this.plan?.pin ?? null;
    if (ok && (this.kind === 'query' || this.kind === 'execute')) this.inTransaction = holds;
    // the statements of a multi-statement request before a failing one ran (a BEGIN, a SET @v): keep what they wanted
    const ran = ok || this.opened || (this.classification?.statementCount ?? 1) > 1;
    if (this.pin === null) {
      const cause = ran && wanted !== null ? wanted : holds ? 'implicit_transaction' : null;
      if (cause === null) return;
      this.pin = cause;
      this.pinShard = this.shard;
      this.pinnedEpoch = this.owner.epoch;
      this.owner.edge.metrics.pins.inc({ cause });
      return;
    }
    if (ran && (wanted === 'session_state' || wanted === 'cursor') && TRANSACTIONAL.has(this.pin)) this.pin = wanted;
    else if (ok && TRANSACTIONAL.has(this.pin) && !holds && (this.kind === 'query' || this.kind === 'execute')) this.unpin();
  }

  /**
   * A passthrough session's connection, logged in as its client (src/passthrough): pinned for the
   * session's life (no pool can log a connection in again without the password), closed with it.
   */
  adoptDedicated(conn: BackendConnection, shard: string): void {
    this.conn = conn;
    this.dedicated = true;
    this.pin = 'passthrough';
    this.pinShard = this.shard = shard;
    conn.attach(this, 'passthrough');
    this.owner.edge.metrics.pins.inc({ cause: 'passthrough' });
  }

  /**
   * Gives up the connection the session holds between statements, pinned or parked (transaction
   * ended, COM_RESET_CONNECTION, COM_CHANGE_USER): it goes back to its pool, reset there when it
   * holds anything of this session's.
   */
  unpin(): void {
    if (this.dedicated && this.pin === 'passthrough') return this.resetDedicated();
    this.pin = null;
    this.pinnedEpoch = null;
    if (this.packet === null) this.release(true, 'unpinned');
  }

  /** COM_RESET_CONNECTION of a passthrough session: its own connection is reset on the server (commands queue behind it). */
  private resetDedicated(): void {
    const conn = this.conn as BackendConnection;
    conn.dirty = true;
    conn.reset().catch((err: unknown) => conn.fail(err instanceof DbproxyError ? err : MysqlEdgeErrors.backendProtocol(conn.backend, 'reset failed')));
  }

  /** Ends the command: the connection is kept (pinned or parked) or goes back; the session is told (after `held` is sent, when given). */
  private finish(fatal: boolean, closeReason: string | null, held?: Promise<Buffer>): void {
    this.packet = null;
    this.hold?.abandon?.();
    this.hold = null;
    this.span?.end();
    this.span = null;
    const reason = this.lending === null ? closeReason : this.leaveLending(closeReason);
    if (reason === SHARED) {
      // others' commands still run on the connection: the last of them returns it
    } else if (reason !== null) this.release(false, reason);
    else if (this.pin === null && !this.park()) this.release(true, 'released');
    if (held === undefined) return this.owner.commandDone(fatal);
    void held.then((response) => {
      this.owner.sendHeld(response);
      this.owner.commandDone(fatal);
    });
  }

  /**
   * Leaves the shared lending: SHARED while other sessions' commands still run on its connection;
   * otherwise the lease is this exchange's to return, with the reason to close it (null: reusable).
   */
  private leaveLending(closeReason: string | null): string | null {
    const lending = this.lending as SharedLending;
    const pipelines = this.owner.edge.pipelines;
    this.lending = null;
    if (closeReason !== null) pipelines.retire(lending);
    (this.conn as BackendConnection).detach(this, 'pipelined');
    if (!pipelines.leave(lending)) {
      this.conn = null;
      return SHARED;
    }
    this.lease = lending.lease;
    return closeReason ?? (lending.reusable ? null : 'pipeline-abandoned');
  }

  /** Keeps a clean connection for this session's next statement, when its pool is not short of connections. */
  private park(): boolean {
    const lease = this.lease;
    const conn = this.conn;
    const edge = this.owner.edge;
    if (lease === null || conn === null || lease.reserved || conn.dirty || conn.interrupted || !conn.alive || edge.draining || !ParkedLeases.mayPark(lease)) return false;
    const pool = lease.pool;
    if (!pool.isOpen || conn.age() > pool.options.maxLifetimeMs || !ParkedLeases.roomToPark(pool)) return false;
    conn.detach(this, 'parked');
    this.parkedPool = pool;
    this.parkedAt = edge.clock.now;
    edge.parked.park(pool, this);
    return true;
  }

  surrender(): Lease<BackendConnection> | null {
    const lease = this.lease;
    this.parkedPool = null;
    this.lease = null;
    this.conn = null;
    return lease;
  }

  giveBack(reason: string): void {
    const pool = this.parkedPool;
    if (pool === null) return;
    this.owner.edge.parked.unpark(pool, this);
    this.parkedPool = null;
    this.release(true, reason);
  }

  private release(reusable: boolean, reason: string): void {
    // a parked connection leaves the parked set with its lease: none may take a lease this exchange no longer has
    if (this.parkedPool !== null) {
      this.owner.edge.parked.unpark(this.parkedPool, this);
      this.parkedPool = null;
    }
    const lease = this.lease;
    const conn = this.conn;
    this.lease = null;
    this.conn = null;
    // a transaction still open (the session left mid-way) must be rolled back before reuse
    if (conn && this.inTransaction) conn.dirty = true;
    this.inTransaction = false;
    if (conn) conn.detach(this, reason);
    if (conn && this.dedicated) {
      this.dedicated = false;
      return conn.close(reason);
    }
    if (conn?.interrupted) reusable = false;
    if (lease && !lease.released) lease.pool.release(lease, reusable ? REUSABLE : { reusable: false, reason: conn?.interrupted ? 'killed' : reason });
  }

  /** The edge could not run the command (no backend, pool, protocol): an ERR; pinned sessions end. */
  private fail(err: DbproxyError, lastSeq: number, closeConnection = true): void {
    if (this.hold !== null) lastSeq = -1; // nothing of a held response reached the client
    const pinned = this.pin !== null;
    const wire = toMysqlError(pinned && closeConnection ? MysqlEdgeErrors.pinLost(this.pin as string, err.message) : err);
    this.owner.edge.metrics.errors.inc({ code: String(wire.code) });
    this.span?.fail(String(wire.code), err.message, err.code);
    this.owner.sendError(wire, lastSeq >= 0 ? lastSeq + 1 : this.replySeq());
    if (pinned && closeConnection) {
      this.pin = null;
      this.pinnedEpoch = null;
    }
    this.finish(pinned && closeConnection, closeConnection && this.conn !== null ? 'failed' : null);
  }

  /** The connection died with the command in flight: the client gets an ERR (a statement that may have run is never retried). */
  connectionFailed(err: DbproxyError, lastSeq: number): void {
    const conn = this.conn as BackendConnection;
    const reason = err.code === 'DBP_ERR_MYSQLEDGE_RESULT_TOO_LARGE' ? 'result_too_large' : err.code === 'DBP_ERR_MYSQLEDGE_BACKEND_LOST' ? 'lost' : 'protocol';
    this.owner.edge.metrics.backendFailures.inc({ backend: conn.backend, reason, shard: this.shard });
    this.fail(err, lastSeq);
  }

  /**
   * The pinned connection died between statements (wait_timeout, KILL, server shutdown): the client
   * is told at once, with the server's own ERR when it sent one, and the session closes, as a direct
   * connection would (its transaction or session state is gone).
   */
  idleLost(err: DbproxyError, farewell: ServerFarewell | null): void {
    const conn = this.conn;
    if (this.packet !== null || this.pin === null || conn === null) return; // a command about to run fails on its own
    this.owner.edge.metrics.backendFailures.inc({ backend: conn.backend, reason: 'lost', shard: this.shard });
    const server = farewell?.err;
    const wire = server ? { code: server.code, sqlState: server.sqlState ?? 'HY000', message: server.message } : toMysqlError(MysqlEdgeErrors.pinLost(this.pin, err.message));
    this.pin = null;
    this.pinnedEpoch = null;
    this.release(false, 'lost');
    this.owner.pinnedConnectionLost(wire, farewell?.sequenceId ?? 0);
  }

  /** The query deadline passed: the connection is closed (never reused), the client gets an ERR. */
  timeout(err: DbproxyError): void {
    if (this.packet === null) return;
    if (this.waiter) {
      this.waiter.abort(err);
      this.waiter = null;
      return this.fail(err, -1, false);
    }
    const conn = this.conn;
    const lastSeq = conn ? conn.lastSeqOf(this) : -1;
    if (this.lending !== null && conn !== null) {
      // other sessions' reads share the connection: this one's response is dropped when it comes, and the connection closes after the last
      conn.abandon(this);
      return this.fail(err, lastSeq);
    }
    conn?.detach(this, 'timeout');
    conn?.close('query-timeout');
    this.fail(err, lastSeq);
  }

  /**
   * KILL QUERY of this session (src/kill): the backend thread to kill when the command runs on a
   * connection of its own (never lent to another client again); a pool wait or a read sharing a
   * connection is ended here with `err`, and null returned.
   */
  interrupt(err: DbproxyError): BackendThread | null {
    if (this.packet === null) return null;
    const conn = this.conn;
    if (this.waiter !== null || conn === null || this.lending !== null) {
      this.timeout(err);
      return null;
    }
    conn.interrupted = true;
    return { backend: conn.backend, threadId: conn.threadId };
  }

  /** The backend the session's connection is on now (running, pinned or parked); null between statements. */
  get backendName(): string | null {
    return this.conn?.backend ?? null;
  }

  /** The thread running this session's command on a connection of its own; null when none does. */
  runningThread(): BackendThread | null {
    const conn = this.conn;
    if (this.packet === null || conn === null || this.lending !== null || conn.outstanding === 0) return null;
    return { backend: conn.backend, threadId: conn.threadId };
  }

  /** The client went away: an unfinished response makes the connection unusable. */
  close(): void {
    this.hold?.abandon?.();
    this.hold = null;
    this.giveBack('session-end');
    if (this.waiter) this.waiter.abort(new Error('client disconnected'));
    this.waiter = null;
    const busy = this.packet !== null && this.conn !== null && this.conn.outstanding > 0;
    this.packet = null;
    this.span?.end();
    this.span = null;
    this.pin = null;
    this.pinnedEpoch = null;
    if (this.lending !== null) {
      if (busy) (this.conn as BackendConnection).abandon(this);
      const reason = this.leaveLending(busy ? 'client-gone' : null);
      if (reason === SHARED) return;
      return this.release(reason === null, reason ?? 'session-end');
    }
    this.release(!busy, busy ? 'client-gone' : 'session-end');
  }
}

const RESERVED = { reserved: true };
const SHARED = 'shared';
const ORDINARY = {};
const REUSABLE = { reusable: true };

function isConnectFailure(err: unknown): boolean {
  const code = err instanceof DbproxyError ? err.code : '';
  return code === 'DBP_ERR_POOL_CREATE_FAILED' || code === 'DBP_ERR_MYSQLEDGE_BACKEND_CONNECT';
}

