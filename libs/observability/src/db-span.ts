// Database spans by the OpenTelemetry database semantic conventions, one shape for the three edges:
// a SERVER span per statement or command, an INTERNAL child for the pool wait and a CLIENT child for
// the backend round trip. Nothing is built for a span that is not recorded: start() returns null
// (tracing off, or the trace not sampled) and callers skip every other call with `?.`.
import { context, INVALID_TRACEID, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api';

/** Attribute names (semantic conventions v1.33+, stable database conventions). */
export const DbAttributes = {
  system: 'db.system.name',
  operation: 'db.operation.name',
  collection: 'db.collection.name',
  namespace: 'db.namespace',
  queryText: 'db.query.text',
  batchSize: 'db.operation.batch.size',
  statusCode: 'db.response.status_code',
  errorType: 'error.type',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  /** dbproxy's own: the configured backend name the round trip went to. */
  backend: 'dbproxy.backend',
} as const;

export type DbSystemName = 'mysql' | 'mariadb' | 'postgresql' | 'redis';

/** What a statement is, as the span names it. */
export interface DbOperation {
  readonly system: DbSystemName;
  /** `SELECT`, `GET`, `COM_PING`...: low cardinality, upper case. */
  readonly operation: string;
  /** The one table (or key space) the statement names; absent when none or several. */
  readonly collection?: string;
  /** The database (SQL) or database index (Redis). */
  readonly namespace?: string;
  /** The statement's fingerprint: never literal values. */
  readonly queryText?: string;
  /** Statements in a batch or pipeline unit (set when more than one). */
  readonly batchSize?: number;
}

const SERVER: SpanOptions = { kind: SpanKind.SERVER };
const PLACEHOLDER = 'db';

/**
 * True when `tracer` belongs to a registered SDK provider (spans may be recorded); false for the
 * API's no-op tracer, so that an edge skips even the span start per command. The probe span is
 * never ended, so never exported.
 */
export function tracerRecords(tracer: Tracer | null): boolean {
  return tracer !== null && tracer.startSpan('dbproxy tracing probe').spanContext().traceId !== INVALID_TRACEID;
}

/** `{operation} {collection}`, else `{operation} {namespace}` (SQL), else `{operation}` (semantic conventions' span name). */
export function dbSpanName(op: DbOperation): string {
  if (op.collection) return `${op.operation} ${op.collection}`;
  if (op.namespace && op.system !== 'redis') return `${op.operation} ${op.namespace}`;
  return op.operation;
}

/** The `db.system.name` of a MySQL-protocol server from its greeting's version string. */
export function mysqlSystemOf(serverVersion: string): DbSystemName {
  return /mariadb/i.test(serverVersion) ? 'mariadb' : 'mysql';
}

const endpoints = new Map<string, { address: string; port: number }>();

/** "host:port" (IPv6 in brackets or not) split once per distinct address. */
export function splitAddress(hostPort: string): { address: string; port: number } {
  let known = endpoints.get(hostPort);
  if (known === undefined) {
    const colon = hostPort.lastIndexOf(':');
    const host = colon > 0 ? hostPort.slice(0, colon) : hostPort;
    known = { address: host.replace(/^\[(.*)\]$/, '$1'), port: colon > 0 ? Number(hostPort.slice(colon + 1)) : 0 };
    if (endpoints.size < 4096) endpoints.set(hostPort, known);
  }
  return known;
}

function operationAttributes(op: DbOperation): Attributes {
  const attrs: Attributes = { [DbAttributes.system]: op.system, [DbAttributes.operation]: op.operation };
  if (op.collection) attrs[DbAttributes.collection] = op.collection;
  if (op.namespace) attrs[DbAttributes.namespace] = op.namespace;
  if (op.queryText) attrs[DbAttributes.queryText] = op.queryText;
  if (op.batchSize !== undefined && op.batchSize > 1) attrs[DbAttributes.batchSize] = op.batchSize;
  return attrs;
}

/** A statement's span tree: SERVER span, optional pool-wait child, CLIENT child per backend round trip. */
export class DbSpan {
  private op: DbOperation | undefined;
  private wait: Span | undefined;
  private call: Span | undefined;
  private parentOfChildren: Context | undefined;

  private constructor(
    readonly server: Span,
    private readonly tracer: Tracer,
  ) {}

  /**
   * Starts a SERVER span (as a child of `parent`: a client's sqlcommenter traceparent, or the
   * active context); null when tracing is off or the trace is not sampled.
   */
  static start(tracer: Tracer | null, parent?: Context): DbSpan | null {
    if (tracer === null) return null;
    const span = tracer.startSpan(PLACEHOLDER, SERVER, parent);
    if (!span.isRecording()) return null;
    return new DbSpan(span, tracer);
  }

  /** Names the span and sets the statement's attributes (`extra`: the edge's own dbproxy.* keys). */
  describe(op: DbOperation, extra?: Attributes): this {
    this.op = op;
    this.server.updateName(dbSpanName(op));
    this.server.setAttributes(operationAttributes(op));
    if (extra !== undefined) this.server.setAttributes(extra);
    return this;
  }

  /** The context whose active span is the SERVER span (children, bus headers). */
  context(): Context {
    return (this.parentOfChildren ??= trace.setSpan(context.active(), this.server));
  }

  /** The statement waits for a pooled connection. */
  poolWait(pool: string): void {
    if (this.wait !== undefined) return;
    this.wait = this.child('pool wait', SpanKind.INTERNAL, { 'dbproxy.pool': pool });
  }

  /** The pool lent a connection (or the wait ended without one: `error`). */
  poolGranted(error?: string): void {
    const wait = this.wait;
    if (wait === undefined) return;
    this.wait = undefined;
    if (error !== undefined) wait.setStatus({ code: SpanStatusCode.ERROR, message: error });
    wait.end();
  }

  /**
   * The round trip to `backend` at `hostPort` starts: a CLIENT span with the statement's attributes,
   * `system` being the engine the backend says it is (a MariaDB behind mysql-edge).
   */
  backendCall(backend: string, hostPort: string | undefined, system?: DbSystemName): void {
    this.poolGranted();
    if (this.call !== undefined) return;
    const op = this.op;
    const attrs: Attributes = op === undefined ? {} : operationAttributes(op);
    if (system !== undefined) attrs[DbAttributes.system] = system;
    attrs[DbAttributes.backend] = backend;
    if (hostPort !== undefined) {
      const { address, port } = splitAddress(hostPort);
      attrs[DbAttributes.serverAddress] = address;
      if (port > 0) attrs[DbAttributes.serverPort] = port;
    }
    this.call = this.child(op === undefined ? PLACEHOLDER : dbSpanName(op), SpanKind.CLIENT, attrs);
    if (system !== undefined && op !== undefined && system !== op.system) this.server.setAttribute(DbAttributes.system, system);
  }

  /** The backend answered; `statusCode` (errno, SQLSTATE, Redis error prefix) marks an error reply. */
  backendDone(statusCode?: string, message?: string): void {
    const call = this.call;
    if (call === undefined) return;
    this.call = undefined;
    if (statusCode !== undefined) markError(call, statusCode, message);
    call.end();
  }

  /** The statement failed with `statusCode` (the code the client got); `errorType` the edge's own error code when it failed it. */
  fail(statusCode: string, message?: string, errorType?: string): void {
    markError(this.server, statusCode, message, errorType);
  }

  setAttribute(key: string, value: string | number | boolean): void {
    this.server.setAttribute(key, value);
  }

  /** Ends whatever is still open, then the SERVER span. */
  end(): void {
    this.poolGranted();
    this.backendDone();
    this.server.end();
  }

  private child(name: string, kind: SpanKind, attributes: Attributes): Span {
    return this.tracer.startSpan(name, { kind, attributes }, this.context());
  }
}

function markError(span: Span, statusCode: string, message: string | undefined, errorType = statusCode): void {
  span.setAttribute(DbAttributes.statusCode, statusCode);
  span.setAttribute(DbAttributes.errorType, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message ?? statusCode });
}
