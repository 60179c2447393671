// The span tree of one transaction-mode unit of work (libs/observability DbSpan): a SERVER span
// named by the first statement's operation and table, a pool-wait child when the unit waits for a
// connection, a CLIENT child for the round trip to the backend (server.address/port). Statements
// are fingerprints (never literal values); a sqlcommenter `traceparent` continues the client's
// trace. With tracing off a session learns so from its first unit and no longer parses traceparents.
import { performance } from 'node:perf_hooks';
import { INVALID_TRACEID, type Attributes, type Tracer } from '@opentelemetry/api';
import { contextFromTraceparent, DbSpan, type DbOperation } from '@dbproxy/observability';
import type { SqlRoute } from '@dbproxy/sql';

/** Distinct statements named in one span; a longer pipeline is summarized by `db.operation.batch.size`. */
const MAX_STATEMENTS = 16;
const OPERATIONS = new Map<string, string>();

function operationOf(routes: readonly SqlRoute[]): string {
  const command = routes.length > 0 ? routes[0].classification.command : 'sync';
  let name = OPERATIONS.get(command);
  if (name === undefined) {
    name = command.toUpperCase();
    if (OPERATIONS.size < 1024) OPERATIONS.set(command, name);
  }
  return name;
}

/** The one table every statement of the unit names; undefined for none or several. */
function collectionOf(routes: readonly SqlRoute[]): string | undefined {
  let found: string | undefined;
  for (const route of routes) {
    for (const table of route.classification.tables) {
      const name = table.schema ? `${table.schema}.${table.name}` : table.name;
      if (found !== undefined && found !== name) return undefined;
      found = name;
    }
  }
  return found;
}

/** The first statement carrying a sqlcommenter traceparent. */
function tracedRoute(routes: readonly SqlRoute[]): SqlRoute | undefined {
  for (let i = 0; i < routes.length; i++) if (routes[i].traceparent !== undefined) return routes[i];
  return undefined;
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
  private span: DbSpan | null = null;
  /** The API's no-op tracer (no provider registered): nothing is ever recorded. */
  private readonly noopTracer: boolean;
  private waitStarted = 0;
  private backend = '';
  private address: string | undefined;
  /** A refusal sent through the held connection: the unit ends when the backend answers it. */
  private refusal: Error | undefined;

  constructor(
    private readonly tracer: Tracer,
    /** What every span of the session carries: user, listener, shard. */
    private readonly session: Attributes,
    /** The database the session's shard serves (db.namespace). */
    private readonly database: string | undefined,
  ) {
    this.noopTracer = tracer.startSpan('pg-edge tracing probe').spanContext().traceId === INVALID_TRACEID;
  }

  /** A unit starts; a batch continued after Flush keeps the span it has. */
  begin(routes: readonly SqlRoute[]): void {
    if (this.span !== null || this.noopTracer) return;
    const traced = tracedRoute(routes);
    const span = DbSpan.start(this.tracer, traced ? contextFromTraceparent(traced.traceparent, traced.tracestate) : undefined);
    if (span === null) return;
    this.span = span;
    this.refusal = undefined;
    const statements = statementsOf(routes);
    const collection = collectionOf(routes);
    const op: DbOperation = {
      system: 'postgresql',
      operation: operationOf(routes),
      ...(collection !== undefined ? { collection } : {}),
      ...(this.database ? { namespace: this.database } : {}),
      ...(statements.count > 0 ? { queryText: statements.text } : {}),
      batchSize: statements.count,
    };
    span.describe(op, this.session);
    span.setAttribute('dbproxy.statement_hash', statements.hash);
    span.setAttribute('dbproxy.statements', statements.count);
  }

  /** The unit asks `backend`'s pool (at `address`) for a connection. */
  acquiring(backend: string, address: string | undefined, route: 'primary' | 'replica', fellBack: boolean): void {
    const span = this.span;
    if (span === null) return;
    this.backend = backend;
    this.address = address;
    this.waitStarted = performance.now();
    span.setAttribute('dbproxy.route', route);
    span.setAttribute('dbproxy.backend', backend);
    if (fellBack) span.setAttribute('dbproxy.fallback', true);
  }

  /** No idle connection: the unit waits in the pool's queue. */
  waiting(): void {
    this.span?.poolWait(this.backend);
  }

  /** The pool lent a connection: the wait is over, the round trip starts. */
  acquired(): void {
    const span = this.span;
    if (span === null) return;
    span.setAttribute('dbproxy.pool_wait_ms', Math.round((performance.now() - this.waitStarted) * 1000) / 1000);
    span.backendCall(this.backend, this.address);
  }

  /** The unit runs on the connection the session holds (transaction or pin): no pool wait. */
  onHeld(held: 'transaction' | 'pinned', backend: string, address: string | undefined): void {
    const span = this.span;
    if (span === null) return;
    span.setAttribute('dbproxy.held', held);
    span.setAttribute('dbproxy.backend', backend);
    span.setAttribute('dbproxy.pool_wait_ms', 0);
    span.backendCall(backend, address);
  }

  /** The unit is refused but still runs through the held connection (so a transaction aborts there too). */
  refused(error: Error): void {
    if (this.span !== null) this.refusal = error;
  }

  /** The session ends with a unit still open (client gone, shutdown, poisoned). */
  abandon(reason: string): void {
    if (this.span !== null) this.end(new Error(reason));
  }

  /** The unit ended; `failure` (ours) or `sqlState` (the backend's) marks it failed. */
  end(failure?: Error, sqlState?: string): void {
    const span = this.span;
    if (span === null) return;
    this.span = null;
    const error = failure ?? this.refusal;
    this.refusal = undefined;
    span.backendDone(sqlState, sqlState === undefined ? undefined : `SQLSTATE ${sqlState}`);
    if (error !== undefined) span.fail(sqlState ?? codeOf(error), error.message, codeOf(error));
    else if (sqlState !== undefined) span.fail(sqlState, `SQLSTATE ${sqlState}`);
    span.end();
  }
}

/** The edge's own error code (DbproxyError) or the error's class name. */
function codeOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.name;
}
