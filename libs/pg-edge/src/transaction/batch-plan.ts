// The extended protocol in transaction mode: client messages up to Sync (or Flush) are planned
// against the session's statements, then emitted on whichever pooled connection runs them, every
// statement mapped onto the backend's unnamed statement and re-prepared there when needed.
import { Buffer } from 'node:buffer';
import {
  decodeFrontendMessage,
  encodeBackendMessages,
  encodeFrontendMessages,
  FrontendCode as FrontendCodeExport,
  type Bind,
  type Frame,
} from '@dbproxy/protocol-pg';
import type { SqlRoute, SqlRouter } from '@dbproxy/sql';
import { emptyArray as emptyArrayExport } from '@dbproxy/util';

/** Routes of statement texts: Parse texts repeat (they carry placeholders, not values), so they are kept by text. */
export class StatementRoutes {
  private readonly byText = new Map<string, SqlRoute>();

  constructor(
    private readonly router: SqlRouter,
    private readonly limit = 4096,
  ) {}

  route(sql: string): SqlRoute {
    let route = this.byText.get(sql);
    if (route === undefined) {
      route = this.router.route(sql);
      if (this.byText.size >= this.limit) this.byText.clear();
      this.byText.set(sql, route);
    }
    return route;
  }
}
import { PgEdgeErrors, toErrorResponse } from '../errors';
import type { PgBackendConnection } from './backend-connection';
import { bindTo, closeStatement, statementKey } from './backend-statements';
import type { SliceWriter } from './slice-writer';
import { expectation, type ClientStatement, type Expectation, type StatementRegistry } from './statements';
/** Read once: through the package's CommonJS `export *` every access would be a getter call. */
const FrontendCode = FrontendCodeExport;
const emptyArray = emptyArrayExport;

type PlannedOp =
  | { readonly op: 'parse'; readonly frame: Frame; readonly statement: ClientStatement; readonly infer: boolean }
  /** `at`/`end`: where the statement name is in the frame (re-addressed to the backend's statement; parameters are never decoded). */
  | { readonly op: 'bind'; readonly frame: Frame; readonly statement: ClientStatement; readonly at: number; readonly end: number }
  | { readonly op: 'describe_statement'; readonly statement: ClientStatement }
  | { readonly op: 'close_statement'; readonly statement: ClientStatement | undefined }
  /** `answer`: the Expectation of `expect`, looked up when planned (a lookup by a varying key at emit was megamorphic). */
  | { readonly op: 'forward'; readonly frame: Frame; readonly expect: Expectation['kind'] | undefined; readonly answer: Expectation | undefined }
  | { readonly op: 'fail'; readonly error: Error };

/**
 * Planned ops are made here only, every one with all nine fields in one order: one hidden class,
 * so emitOne's reads of `op.op`, `op.frame`, ... stay inline (six literal shapes made them megamorphic).
 */
const forwardOp = (frame: Frame, expect: Expectation['kind'] | undefined, answer: Expectation | undefined): PlannedOp =>
  ({ op: 'forward', frame, statement: undefined, infer: false, at: 0, end: 0, expect, error: undefined, answer }) as PlannedOp;
const parseOp = (frame: Frame, statement: ClientStatement, infer: boolean): PlannedOp =>
  ({ op: 'parse', frame, statement, infer, at: 0, end: 0, expect: undefined, error: undefined, answer: undefined }) as PlannedOp;
const bindOp = (frame: Frame, statement: ClientStatement, at: number, end: number): PlannedOp =>
  ({ op: 'bind', frame, statement, infer: false, at, end, expect: undefined, error: undefined, answer: undefined }) as PlannedOp;
const describeStatementOp = (statement: ClientStatement): PlannedOp =>
  ({ op: 'describe_statement', frame: undefined, statement, infer: false, at: 0, end: 0, expect: undefined, error: undefined, answer: undefined }) as PlannedOp;
const closeStatementOp = (statement: ClientStatement | undefined): PlannedOp =>
  ({ op: 'close_statement', frame: undefined, statement, infer: false, at: 0, end: 0, expect: undefined, error: undefined, answer: undefined }) as PlannedOp;
const failOp = (error: Error): PlannedOp =>
  ({ op: 'fail', frame: undefined, statement: undefined, infer: false, at: 0, end: 0, expect: undefined, error, answer: undefined }) as PlannedOp;

/** A typed frame's header: type byte and int32 length. */
const TYPED_HEADER = 5;
/** Unnamed Parse messages up to this size are remembered (a copy per session) to be recognised when they repeat. */
const MAX_REMEMBERED_PARSE = 2048;
const DESCRIBE_UNNAMED = encodeFrontendMessages({ type: 'Describe', kind: 'S', name: '' });
const CLOSE_UNNAMED = encodeFrontendMessages({ type: 'Close', kind: 'S', name: '' });
/** Answers a client's Parse of a statement the connection holds already with ParseComplete, at no cost. */
const EMPTY_PARSE = encodeFrontendMessages({ type: 'Parse', statement: '', sql: '', paramTypes: [] });
/** A Bind the backend must refuse (no such statement): it fails the batch there too, so a transaction aborts as it would have. */
const FAILING_BIND = encodeFrontendMessages({ type: 'Bind', portal: '', statement: 'dbproxy.refused', paramFormats: [], params: [], resultFormats: [] });

/** Expectations of forwarded messages carry nothing else: one shared object per kind. */
const FORWARDED: Readonly<Record<Expectation['kind'], Expectation>> = Object.freeze({
  parse: expectation('parse', true),
  bind: expectation('bind', true),
  describe_statement: expectation('describe_statement', true),
  describe_portal: expectation('describe_portal', true),
  execute: expectation('execute', true),
  close: expectation('close', true),
  sync: expectation('sync', true),
  query: expectation('query', true),
  setup: expectation('setup', false),
});

export type PlanProgress = 'pending' | 'flush' | 'sync';

/** One execution of one statement, as BatchPlan.soleExecution finds it. */
export interface SoleExecution {
  readonly statement: ClientStatement;
  readonly bind: Bind;
  /** The client sent the statement's Parse in this batch (it gets a ParseComplete). */
  readonly parsed: boolean;
  /** The client described the portal (it gets the RowDescription or NoData). */
  readonly described: boolean;
}

export class BatchPlan {
  private ops: PlannedOp[] = [];
  /** What the last emit sent: sent again on another connection when the first one's backend never read it. */
  private emitted: PlannedOp[] = [];
  /** Statement routes of what was planned since the last emit: they decide where the batch runs. */
  readonly routes: SqlRoute[] = [];
  /** With statement sharding: each Bind's route bound to its parameters (they decide the batch's shard). */
  readonly executions: SqlRoute[] = [];
  /** After a refusal, PostgreSQL skips everything until Sync; so do we. */
  skipping = false;
  /**
   * The session's last unnamed Parse (a copy of its bytes, when short) and its statement: a driver
   * sends the same Parse before every execution (pgbench -M extended, node-postgres without a
   * name), and the same bytes are the same text and types, so it is planned without decoding.
   */
  private lastUnnamed: { readonly bytes: Buffer; readonly statement: ClientStatement } | undefined;
  synced = false;

  constructor(
    private readonly registry: StatementRegistry,
    private readonly routes_: StatementRoutes,
    /** Statement sharding's hook: the route of one execution (a Bind) of a statement. */
    private readonly executionRoute?: (statement: ClientStatement, bind: Bind) => SqlRoute,
    /** Told of each exception planning a frame raised (to log one that is not a dbproxy error). */
    private readonly onPlanError: (err: unknown) => void = () => undefined,
  ) {}

  get empty(): boolean {
    return this.ops.length === 0;
  }

  add(frame: Frame): PlanProgress {
    if (frame.code === FrontendCode.Sync) {
      this.ops.push(forwardOp(frame, 'sync', FORWARDED.sync));
      this.skipping = false;
      this.synced = true;
      return 'sync';
    }
    if (frame.code === FrontendCode.Flush) {
      this.ops.push(forwardOp(frame, undefined, undefined));
      return 'flush';
    }
    if (this.skipping) return 'pending';
    try {
      this.plan(frame);
    } catch (err) {
      this.onPlanError(err);
      this.refuse(err instanceof Error ? err : new Error(String(err)));
    }
    return 'pending';
  }

  /** Replaces what is pending by one refusal (a routing decision said no), undoing its registry changes. */
  refuseAll(error: Error): void {
    const last = this.ops[this.ops.length - 1];
    for (const op of this.ops) {
      if (op.op === 'parse') this.registry.remove(op.statement);
      else if (op.op === 'close_statement' && op.statement && !this.registry.has(op.statement.name)) this.registry.set(op.statement);
    }
    const keep = last && last.op === 'forward' && (last.expect === 'sync' || last.expect === undefined) ? [last] : [];
    this.ops = [failOp(error), ...keep];
    emptyArray(this.routes);
    emptyArray(this.executions);
    this.skipping = !this.synced;
  }

  /**
   * The pending batch as one execution of one statement — `[Parse] Bind [Describe portal] Execute
   * (all rows) Sync` — for statement sharding's read on every shard; undefined for anything else.
   */
  soleExecution(): SoleExecution | undefined {
    let parsed = false;
    let described = false;
    let bind: (PlannedOp & { op: 'bind' }) | undefined;
    let executed = false;
    let synced = false;
    for (const op of this.ops) {
      if (op.op === 'parse' && !parsed && bind === undefined) parsed = true;
      else if (op.op === 'bind' && bind === undefined) bind = op;
      else if (op.op === 'forward' && op.expect === 'describe_portal' && bind && !executed) described = true;
      else if (op.op === 'forward' && op.expect === 'execute' && bind && !executed && executeMaxRows(op.frame) === 0) executed = true;
      else if (op.op === 'forward' && op.expect === 'sync' && executed && !synced) synced = true;
      else return undefined;
    }
    if (!bind || !synced) return undefined;
    const message = decodeFrontendMessage(bind.frame) as Bind;
    return { statement: bind.statement, bind: message, parsed, described };
  }

  /** The pending batch was answered without a backend as if it ran there: its registry changes stay. */
  answered(): void {
    this.ops = [];
    emptyArray(this.routes);
    emptyArray(this.executions);
    this.skipping = false;
    this.synced = false;
  }

  /** Forgets what is pending (answered without a backend), undoing its registry changes. */
  discard(): void {
    this.refuseAll(new Error('discarded'));
    this.ops = [];
    this.skipping = false;
    this.synced = false;
  }

  private refuse(error: Error): void {
    this.ops.push(failOp(error));
    this.skipping = true;
  }

  private plan(frame: Frame): void {
    if (this.planWithoutDecoding(frame)) return;
    const message = decodeFrontendMessage(frame);
    switch (message.type) {
      case 'Parse': {
        if (message.statement !== '' && this.registry.has(message.statement)) throw PgEdgeErrors.statementExists(message.statement);
        if (this.registry.full(message.statement)) throw PgEdgeErrors.tooManyStatements(this.registry.size);
        const route = this.routes_.route(message.sql);
        const key = statementKey(message.sql, message.paramTypes);
        const statement: ClientStatement = { name: message.statement, sql: message.sql, paramTypes: message.paramTypes, inferred: undefined, route, key };
        this.registry.set(statement);
        if (message.statement === '' && frame.bytes.length <= MAX_REMEMBERED_PARSE) this.lastUnnamed = { bytes: Buffer.from(frame.bytes), statement };
        this.routes.push(route);
        const infer = message.statement !== '' && (message.paramTypes.length < maxParameter(message.sql) || message.paramTypes.includes(0));
        return void this.ops.push(parseOp(frame, statement, infer));
      }
      case 'Bind':
        throw PgEdgeErrors.protocol('malformed Bind');
      case 'Describe':
        if (message.kind === 'P') return void this.ops.push(forwardOp(frame, 'describe_portal', FORWARDED.describe_portal));
        return void this.ops.push(describeStatementOp(this.lookup(message.name)));
      case 'Close':
        if (message.kind === 'P') return void this.ops.push(forwardOp(frame, 'close', FORWARDED.close));
        return void this.ops.push(closeStatementOp(this.registry.delete(message.name)));
      case 'Execute':
        return void this.ops.push(forwardOp(frame, 'execute', FORWARDED.execute));
      default:
        throw PgEdgeErrors.protocol(`${message.type} inside an extended-protocol batch`);
    }
  }

  /** Execute, Bind and Describe portal need only names: read them in place; a Parse seen last time is known. */
  private planWithoutDecoding(frame: Frame): boolean {
    const code = frame.code;
    if (code === FrontendCode.Execute) {
      this.ops.push(forwardOp(frame, 'execute', FORWARDED.execute));
      return true;
    }
    if (code === FrontendCode.Parse) return this.planRepeatedParse(frame);
    // read in place: the frame's range of its read when it has one (no view per frame)
    const source = frame.source;
    const buf = source ?? frame.bytes;
    const start = source === undefined ? 0 : (frame.start as number);
    const end = source === undefined ? buf.length : (frame.end as number);
    const body = start + TYPED_HEADER;
    if (code === FrontendCode.Bind) {
      const portalEnd = nulAt(buf, body, end);
      const statementEnd = portalEnd < 0 ? -1 : nulAt(buf, portalEnd + 1, end);
      if (statementEnd < 0) return false;
      const statement = this.lookup(statementEnd === portalEnd + 1 ? '' : buf.toString('utf8', portalEnd + 1, statementEnd));
      this.routes.push(statement.route);
      if (this.executionRoute) this.executions.push(this.executionRoute(statement, decodeFrontendMessage(frame) as Bind));
      this.ops.push(bindOp(frame, statement, portalEnd + 1 - start, statementEnd - start));
      return true;
    }
    if (code === FrontendCode.Describe && body < end && buf[body] === 0x50 /* 'P' */) {
      this.ops.push(forwardOp(frame, 'describe_portal', FORWARDED.describe_portal));
      return true;
    }
    return false;
  }

  /** The unnamed Parse the session sent last time, byte for byte: the same statement again. */
  private planRepeatedParse(frame: Frame): boolean {
    const last = this.lastUnnamed;
    if (last === undefined || !sameBytes(last.bytes, frame)) return false;
    const statement = last.statement;
    this.registry.set(statement);
    this.routes.push(statement.route);
    this.ops.push(parseOp(frame, statement, false));
    return true;
  }

  private lookup(name: string): ClientStatement {
    const statement = this.registry.get(name);
    if (!statement) throw PgEdgeErrors.statementUnknown(name);
    return statement;
  }

  /** Writes what was planned onto `conn`'s stream (via `out`) and the answers to expect. */
  emit(conn: PgBackendConnection, out: SliceWriter, expect: Expectation[]): void {
    const ops = this.ops;
    for (const op of ops) this.emitOne(op, conn, out, expect);
    this.emitted = ops;
    this.ops = [];
    emptyArray(this.routes);
    emptyArray(this.executions);
    if (this.synced) this.synced = false;
  }

  /** The last emitted unit once more, on `conn` (statements it uses are prepared there as needed). */
  emitAgain(conn: PgBackendConnection, out: SliceWriter, expect: Expectation[]): void {
    for (const op of this.emitted) this.emitOne(op, conn, out, expect);
  }

  /** The last emitted unit never ran anywhere (no connection for it again): its Parses are forgotten, as the backend's would be. */
  forgetEmitted(): void {
    for (const op of this.emitted) if (op.op === 'parse') this.registry.remove(op.statement);
    this.emitted = [];
  }

  private emitOne(op: PlannedOp, conn: PgBackendConnection, out: SliceWriter, expect: Expectation[]): void {
    switch (op.op) {
      case 'parse': {
        const statement = op.statement;
        if (statement.name === '') {
          out.addFrame(op.frame);
          conn.unnamedHolds = statement;
          return void expect.push(expectation('parse', true, { undo: () => this.registry.remove(statement) }));
        }
        // A named statement is prepared on the connection under its backend name, or found there
        // already (another client's): then an empty Parse of the unnamed statement answers the client.
        const statements = conn.statements;
        let name = statements.use(statement.key);
        if (name === undefined) {
          name = prepareOnBackend(statement, conn, out, expect, true, () => this.registry.remove(statement));
        } else {
          out.add(EMPTY_PARSE);
          conn.unnamedHolds = undefined;
          expect.push(expectation('parse', true, { undo: () => this.registry.remove(statement) }));
        }
        if (op.infer) {
          out.add(describeStatement(name));
          expect.push(expectation('describe_statement', false, { statement }));
        }
        return;
      }
      case 'bind': {
        const name = ensurePrepared(op.statement, conn, out, expect);
        // the unnamed statement, or the same name: the client's Bind goes as it came
        if (op.end - op.at === Buffer.byteLength(name) && (name === '' || op.frame.bytes.toString('utf8', op.at, op.end) === name)) out.addFrame(op.frame);
        else out.add(bindTo(op.frame.bytes, op.at, op.end, name));
        return void expect.push(FORWARDED.bind);
      }
      case 'describe_statement':
        out.add(describeStatement(ensurePrepared(op.statement, conn, out, expect)));
        return void expect.push(expectation('describe_statement', true, { statement: op.statement }));
      case 'close_statement': {
        // the backend statement stays for the connection's other clients: only the unnamed one is closed
        out.add(CLOSE_UNNAMED);
        conn.unnamedHolds = undefined;
        const statement = op.statement;
        return void expect.push(expectation('close', true, { undo: statement ? () => this.registry.get(statement.name) ?? this.registry.set(statement) : undefined }));
      }
      case 'forward':
        out.addFrame(op.frame);
        if (op.answer) expect.push(op.answer);
        return;
      case 'fail':
        out.add(FAILING_BIND);
        return void expect.push(expectation('bind', true, { replaceError: encodeBackendMessages(toErrorResponse(op.error)) }));
    }
  }
}

/**
 * The backend statement a session statement runs as on `conn`: a named one is prepared once per
 * connection and shared by every client with the same text and parameter types; the unnamed one is
 * re-prepared in the connection's unnamed statement when that holds another.
 */
function ensurePrepared(statement: ClientStatement, conn: PgBackendConnection, out: SliceWriter, expect: Expectation[]): string {
  if (statement.name !== '') return conn.statements.use(statement.key) ?? prepareOnBackend(statement, conn, out, expect, false);
  if (conn.unnamedHolds === statement) return '';
  out.add(encodeFrontendMessages({ type: 'Parse', statement: '', sql: statement.sql, paramTypes: statement.inferred ?? statement.paramTypes }));
  expect.push(expectation('parse', false));
  conn.unnamedHolds = statement;
  return '';
}

/** Parses `statement` as a new backend statement of `conn` (closing the least recently used one when the connection holds its bound). */
function prepareOnBackend(statement: ClientStatement, conn: PgBackendConnection, out: SliceWriter, expect: Expectation[], forward: boolean, undo?: () => void): string {
  const statements = conn.statements;
  const { name, close } = statements.add(statement.key);
  for (const evicted of close) {
    out.add(closeStatement(evicted));
    expect.push(expectation('close', false, { undo: () => statements.orphan(evicted) }));
  }
  out.add(encodeFrontendMessages({ type: 'Parse', statement: name, sql: statement.sql, paramTypes: statement.paramTypes }));
  expect.push(
    expectation('parse', forward, {
      undo: () => {
        statements.forget(statement.key, name);
        undo?.();
      },
    }),
  );
  return name;
}

function describeStatement(name: string): Buffer {
  return name === '' ? DESCRIBE_UNNAMED : encodeFrontendMessages({ type: 'Describe', kind: 'S', name });
}

/** An Execute's row limit (0: all rows), read after its portal name. */
function executeMaxRows(frame: Frame): number {
  const payload = frame.payload;
  return payload.readInt32BE(payload.indexOf(0) + 1);
}

/** Whether `frame` is `bytes`, compared where the frame lies in its read (no view made for it). */
/** Where the first NUL in `buf[from, end)` is, or -1 (names are short: a loop, not indexOf's call into C++). */
function nulAt(buf: Buffer, from: number, end: number): number {
  for (let i = from; i < end; i++) if (buf[i] === 0) return i;
  return -1;
}

function sameBytes(bytes: Buffer, frame: Frame): boolean {
  const source = frame.source;
  if (source === undefined) return bytes.equals(frame.bytes);
  const start = frame.start as number;
  const end = frame.end as number;
  return end - start === bytes.length && source.compare(bytes, 0, bytes.length, start, end) === 0;
}

/** Highest `$n` in the text (a cheap upper bound; literals that look like `$n` only cause an extra Describe). */
function maxParameter(sql: string): number {
  let max = 0;
  for (const m of sql.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(m[1]));
  return max;
}

/** A refusal the session can send without a backend: the error, then ReadyForQuery. */
export function refusalBytes(error: Error, status: number): Buffer {
  return Buffer.concat([encodeBackendMessages(toErrorResponse(error)), readyForQuery(status)]);
}

export function readyForQuery(status: number): Buffer {
  return Buffer.from([0x5a, 0, 0, 0, 5, status]); // 'Z'
}

const SYNC = encodeFrontendMessages({ type: 'Sync' });

/** A simple Query goes as it came; its answers run to ReadyForQuery. */
export function emitQuery(frame: Frame, out: SliceWriter, expect: Expectation[]): void {
  out.addFrame(frame);
  expect.push(FORWARDED.query);
}

/** A refusal the backend takes part in (Bind to a missing statement, then Sync): its error is replaced by ours. */
export function emitRefusal(out: SliceWriter, expect: Expectation[], error: Error): void {
  out.add(FAILING_BIND);
  expect.push(expectation('bind', true, { replaceError: encodeBackendMessages(toErrorResponse(error)) }));
  out.add(SYNC);
  expect.push(FORWARDED.sync);
}
