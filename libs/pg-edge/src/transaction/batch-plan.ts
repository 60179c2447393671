// The extended protocol in transaction mode: client messages up to Sync (or Flush) are planned
// against the session's statements, then emitted on whichever pooled connection runs them, every
// statement mapped onto the backend's unnamed statement and re-prepared there when needed.
import {
  decodeFrontendMessage,
  encodeBackendMessages,
  encodeFrontendMessages,
  FrontendCode as FrontendCodeExport,
  type Bind,
  type Frame,
} from '@dbproxy/protocol-pg';
import type { SqlRoute, SqlRouter } from '@dbproxy/sql';

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
import type { SliceWriter } from './slice-writer';
import type { ClientStatement, Expectation, StatementRegistry } from './statements';
/** Read once: through the package's CommonJS `export *` every access would be a getter call. */
const FrontendCode = FrontendCodeExport;

type PlannedOp =
  | { readonly op: 'parse'; readonly frame: Frame; readonly statement: ClientStatement; readonly infer: boolean }
  /** `message` is decoded only for named statements (it is re-encoded onto the unnamed one). */
  | { readonly op: 'bind'; readonly frame: Frame; readonly statement: ClientStatement; readonly message: Bind | undefined }
  | { readonly op: 'describe_statement'; readonly statement: ClientStatement }
  | { readonly op: 'close_statement'; readonly statement: ClientStatement | undefined }
  | { readonly op: 'forward'; readonly frame: Frame; readonly expect: Expectation['kind'] | undefined }
  | { readonly op: 'fail'; readonly error: Error };

const DESCRIBE_UNNAMED = encodeFrontendMessages({ type: 'Describe', kind: 'S', name: '' });
const CLOSE_UNNAMED = encodeFrontendMessages({ type: 'Close', kind: 'S', name: '' });
/** A Bind the backend must refuse (no such statement): it fails the batch there too, so a transaction aborts as it would have. */
const FAILING_BIND = encodeFrontendMessages({ type: 'Bind', portal: '', statement: 'dbproxy.refused', paramFormats: [], params: [], resultFormats: [] });

/** Expectations of forwarded messages carry nothing else: one shared object per kind. */
const FORWARDED: Readonly<Record<Expectation['kind'], Expectation>> = Object.freeze({
  parse: { kind: 'parse', forward: true },
  bind: { kind: 'bind', forward: true },
  describe_statement: { kind: 'describe_statement', forward: true },
  describe_portal: { kind: 'describe_portal', forward: true },
  execute: { kind: 'execute', forward: true },
  close: { kind: 'close', forward: true },
  sync: { kind: 'sync', forward: true },
  query: { kind: 'query', forward: true },
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
  /** Statement routes of what was planned since the last emit: they decide where the batch runs. */
  readonly routes: SqlRoute[] = [];
  /** With statement sharding: each Bind's route bound to its parameters (they decide the batch's shard). */
  readonly executions: SqlRoute[] = [];
  /** After a refusal, PostgreSQL skips everything until Sync; so do we. */
  skipping = false;
  synced = false;

  constructor(
    private readonly registry: StatementRegistry,
    private readonly routes_: StatementRoutes,
    /** Statement sharding's hook: the route of one execution (a Bind) of a statement. */
    private readonly executionRoute?: (statement: ClientStatement, bind: Bind) => SqlRoute,
  ) {}

  get empty(): boolean {
    return this.ops.length === 0;
  }

  add(frame: Frame): PlanProgress {
    if (frame.code === FrontendCode.Sync) {
      this.ops.push({ op: 'forward', frame, expect: 'sync' });
      this.skipping = false;
      this.synced = true;
      return 'sync';
    }
    if (frame.code === FrontendCode.Flush) {
      this.ops.push({ op: 'forward', frame, expect: undefined });
      return 'flush';
    }
    if (this.skipping) return 'pending';
    try {
      this.plan(frame);
    } catch (err) {
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
    this.ops = [{ op: 'fail', error }, ...keep];
    this.routes.length = 0;
    this.executions.length = 0;
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
    const message = bind.message ?? (decodeFrontendMessage(bind.frame) as Bind);
    return { statement: bind.statement, bind: message, parsed, described };
  }

  /** The pending batch was answered without a backend as if it ran there: its registry changes stay. */
  answered(): void {
    this.ops = [];
    this.routes.length = 0;
    this.executions.length = 0;
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
    this.ops.push({ op: 'fail', error });
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
        const statement: ClientStatement = { name: message.statement, sql: message.sql, paramTypes: message.paramTypes, inferred: undefined, route };
        this.registry.set(statement);
        this.routes.push(route);
        const infer = message.statement !== '' && (message.paramTypes.length < maxParameter(message.sql) || message.paramTypes.includes(0));
        return void this.ops.push({ op: 'parse', frame, statement, infer });
      }
      case 'Bind': {
        const statement = this.lookup(message.statement);
        this.routes.push(statement.route);
        if (this.executionRoute) this.executions.push(this.executionRoute(statement, message));
        return void this.ops.push({ op: 'bind', frame, statement, message });
      }
      case 'Describe':
        if (message.kind === 'P') return void this.ops.push({ op: 'forward', frame, expect: 'describe_portal' });
        return void this.ops.push({ op: 'describe_statement', statement: this.lookup(message.name) });
      case 'Close':
        if (message.kind === 'P') return void this.ops.push({ op: 'forward', frame, expect: 'close' });
        return void this.ops.push({ op: 'close_statement', statement: this.registry.delete(message.name) });
      case 'Execute':
        return void this.ops.push({ op: 'forward', frame, expect: 'execute' });
      default:
        throw PgEdgeErrors.protocol(`${message.type} inside an extended-protocol batch`);
    }
  }

  /** Execute, and Bind/Describe of the unnamed statement, need only names: read them in place. */
  private planWithoutDecoding(frame: Frame): boolean {
    const code = frame.code;
    if (code === FrontendCode.Execute) {
      this.ops.push({ op: 'forward', frame, expect: 'execute' });
      return true;
    }
    const payload = frame.payload;
    if (code === FrontendCode.Bind) {
      const portalEnd = payload.indexOf(0);
      if (portalEnd < 0 || payload[portalEnd + 1] !== 0) return false; // a named statement: decode to re-encode
      const statement = this.lookup('');
      this.routes.push(statement.route);
      if (this.executionRoute) this.executions.push(this.executionRoute(statement, decodeFrontendMessage(frame) as Bind));
      this.ops.push({ op: 'bind', frame, statement, message: undefined });
      return true;
    }
    if (code === FrontendCode.Describe && payload[0] === 0x50 /* 'P' */) {
      this.ops.push({ op: 'forward', frame, expect: 'describe_portal' });
      return true;
    }
    return false;
  }

  private lookup(name: string): ClientStatement {
    const statement = this.registry.get(name);
    if (!statement) throw PgEdgeErrors.statementUnknown(name);
    return statement;
  }

  /** Writes what was planned onto `conn`'s stream (via `out`) and the answers to expect. */
  emit(conn: PgBackendConnection, out: SliceWriter, expect: Expectation[]): void {
    for (const op of this.ops) this.emitOne(op, conn, out, expect);
    this.ops = [];
    this.routes.length = 0;
    this.executions.length = 0;
    if (this.synced) this.synced = false;
  }

  private emitOne(op: PlannedOp, conn: PgBackendConnection, out: SliceWriter, expect: Expectation[]): void {
    switch (op.op) {
      case 'parse': {
        const statement = op.statement;
        out.add(statement.name === '' ? op.frame.bytes : encodeFrontendMessages({ type: 'Parse', statement: '', sql: statement.sql, paramTypes: statement.paramTypes }));
        conn.unnamedHolds = statement;
        expect.push({ kind: 'parse', forward: true, undo: () => this.registry.remove(statement) });
        if (op.infer) {
          out.add(DESCRIBE_UNNAMED);
          expect.push({ kind: 'describe_statement', forward: false, statement });
        }
        return;
      }
      case 'bind':
        ensurePrepared(op.statement, conn, out, expect);
        out.add(op.message === undefined ? op.frame.bytes : encodeFrontendMessages({ ...op.message, statement: '' }));
        return void expect.push({ kind: 'bind', forward: true });
      case 'describe_statement':
        ensurePrepared(op.statement, conn, out, expect);
        out.add(DESCRIBE_UNNAMED);
        return void expect.push({ kind: 'describe_statement', forward: true, statement: op.statement });
      case 'close_statement': {
        out.add(CLOSE_UNNAMED);
        conn.unnamedHolds = undefined;
        const statement = op.statement;
        return void expect.push({ kind: 'close', forward: true, undo: statement ? () => this.registry.get(statement.name) ?? this.registry.set(statement) : undefined });
      }
      case 'forward':
        out.add(op.frame.bytes);
        if (op.expect) expect.push(FORWARDED[op.expect]);
        return;
      case 'fail':
        out.add(FAILING_BIND);
        return void expect.push({ kind: 'bind', forward: true, replaceError: encodeBackendMessages(toErrorResponse(op.error)) });
    }
  }
}

/** Re-prepares a session statement in the connection's unnamed statement when it holds another. */
function ensurePrepared(statement: ClientStatement, conn: PgBackendConnection, out: SliceWriter, expect: Expectation[]): void {
  if (conn.unnamedHolds === statement) return;
  out.add(encodeFrontendMessages({ type: 'Parse', statement: '', sql: statement.sql, paramTypes: statement.inferred ?? statement.paramTypes }));
  expect.push({ kind: 'parse', forward: false });
  conn.unnamedHolds = statement;
}

/** An Execute's row limit (0: all rows), read after its portal name. */
function executeMaxRows(frame: Frame): number {
  const payload = frame.payload;
  return payload.readInt32BE(payload.indexOf(0) + 1);
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
  out.add(frame.bytes);
  expect.push(FORWARDED.query);
}

/** A refusal the backend takes part in (Bind to a missing statement, then Sync): its error is replaced by ours. */
export function emitRefusal(out: SliceWriter, expect: Expectation[], error: Error): void {
  out.add(FAILING_BIND);
  expect.push({ kind: 'bind', forward: true, replaceError: encodeBackendMessages(toErrorResponse(error)) });
  out.add(SYNC);
  expect.push(FORWARDED.sync);
}
