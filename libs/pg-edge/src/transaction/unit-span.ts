// One span per transaction-mode unit of work (edge → pool wait → backend): the statements'
// fingerprints (never their literal values), route, backend and pool wait; a sqlcommenter
// `traceparent` continues the client's trace. With tracing off a unit costs one no-op startSpan
// (the traceparent is not even parsed once the session has seen the tracer is the no-op one).
import { INVALID_TRACEID, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api';
import { contextFromTraceparent } from '@dbproxy/observability';
import type { SqlRoute } from '@dbproxy/sql';

const OPTIONS: SpanOptions = { kind: SpanKind.SERVER };
/** Distinct statements named in one span; a longer pipeline is summarized by `dbproxy.statements`. */
const MAX_STATEMENTS = 16;
/** Span names by command, built once ('postgres select', ...): no string work per unit. */
const NAMES = new Map<string, string>();

function spanName(routes: readonly SqlRoute[]): string {
  const command = routes.length > 0 ? routes[0].classification.command : 'sync';
  let name = NAMES.get(command);
  if (name === undefined) {
    name = `postgres ${command}`;
    NAMES.set(command, name);
  }
  return name;
}

/** The first statement carrying a sqlcommenter traceparent. */
function tracedRoute(routes: readonly SqlRoute[]): SqlRoute | undefined {
  for (let i = 0; i < routes.length; i++) if (routes[i].traceparent !== undefined) return routes[i];
  return undefined;
}

/**
 * True when `span` came from the API's no-op tracer: it then returns its parent's context as is,
 * or an invalid one without a parent (an SDK tracer makes new ids, sampled or not).
 */
function fromNoopTracer(span: Span, parent: Context | undefined): boolean {
  if (span.isRecording()) return false;
  const ids = span.spanContext();
  return parent === undefined ? ids.traceId === INVALID_TRACEID : ids.spanId === trace.getSpanContext(parent)?.spanId;
}

/** The fingerprints of a unit's statements, each once (a Parse and its Bind name the same one). */
function statementsOf(routes: readonly SqlRoute[]): { text: string; hash: string; count: number } {
  const texts: string[] = [];
  const hashes: string[] = [];
  for (const route of routes) {
    if (hashes.includes(route.fingerprint.hash)) continue;
    hashes.push(route.fingerprint.hash);
    if (texts.length < MAX_STATEMENTS) texts.push(route.fingerprint.text);
  }
  return { text: texts.join(';\n'), hash: hashes.slice(0, MAX_STATEMENTS).join(','), count: hashes.length };
}

export class UnitSpan {
  private span: Span | undefined;
  private recording = false;
  /** Learnt from this session's spans: with the no-op tracer, traceparents are not parsed. */
  private noopTracer = false;
  private waitStarted = 0;
  private backend = '';
  private route = '';
  /** A refusal sent through the held connection: the unit ends when the backend answers it. */
  private refusal: Error | undefined;

  constructor(
    private readonly tracer: Tracer,
    /** What every span of the session carries: user, listener, shard. */
    private readonly session: Attributes,
  ) {}

  /** A unit starts; a batch continued after Flush keeps the span it has. */
  begin(routes: readonly SqlRoute[]): void {
    if (this.span !== undefined) return;
    const traced = this.noopTracer ? undefined : tracedRoute(routes);
    const parent = traced ? contextFromTraceparent(traced.traceparent, traced.tracestate) : undefined;
    const span = this.tracer.startSpan(this.noopTracer ? 'postgres' : spanName(routes), OPTIONS, parent);
    this.noopTracer = fromNoopTracer(span, parent);
    this.span = span;
    this.refusal = undefined;
    this.recording = span.isRecording();
    if (!this.recording) return;
    const statements = statementsOf(routes);
    span.setAttributes(this.session);
    span.setAttribute('db.system', 'postgresql');
    span.setAttribute('db.statement', statements.text);
    span.setAttribute('db.statement.hash', statements.hash);
    span.setAttribute('dbproxy.statements', statements.count);
  }

  /** The unit asks `backend`'s pool for a connection. */
  acquiring(backend: string, route: 'primary' | 'replica', fellBack: boolean): void {
    this.backend = backend;
    this.route = route;
    if (!this.recording) return;
    this.waitStarted = performance.now();
    if (fellBack) (this.span as Span).setAttribute('dbproxy.fallback', true);
  }

  /** The pool lent a connection: the wait is over. */
  acquired(): void {
    if (!this.recording) return;
    this.describeBackend(performance.now() - this.waitStarted, undefined);
  }

  /** The unit runs on the connection the session holds (transaction or pin): no pool wait. */
  onHeld(held: 'transaction' | 'pinned'): void {
    if (this.recording) this.describeBackend(0, held);
  }

  /** The unit is refused but still runs through the held connection (so a transaction aborts there too). */
  refused(error: Error): void {
    if (this.span !== undefined && this.recording) this.refusal = error;
  }

  /** The session ends with a unit still open (client gone, shutdown, poisoned). */
  abandon(reason: string): void {
    if (this.span !== undefined) this.end(this.recording ? new Error(reason) : undefined);
  }

  /** The unit ended; `failure` (ours) or `sqlState` (the backend's) marks it failed. */
  end(failure?: Error, sqlState?: string): void {
    const span = this.span;
    if (span === undefined) return;
    this.span = undefined;
    if (this.recording) {
      const error = failure ?? this.refusal;
      this.refusal = undefined;
      if (sqlState !== undefined) span.setAttribute('db.response.status_code', sqlState);
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      else if (sqlState !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: `SQLSTATE ${sqlState}` });
    }
    span.end();
  }

  private describeBackend(waitMs: number, held: string | undefined): void {
    const span = this.span as Span;
    span.setAttribute('dbproxy.route', this.route);
    span.setAttribute('dbproxy.backend', this.backend);
    span.setAttribute('dbproxy.pool_wait_ms', Math.round(waitMs * 1000) / 1000);
    if (held !== undefined) span.setAttribute('dbproxy.held', held);
  }
}
