// UnitSpan with a real SDK tracer and an in-memory exporter: one SERVER span per unit with a CLIENT
// child for the backend round trip (and a pool-wait child when it waited), fingerprints once each,
// held connections, refusals and abandoned units marked failed, and the API's no-op tracer left alone.
import { trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { installPropagation } from '@dbproxy/observability';
import { SqlRouter } from '@dbproxy/sql';
import { UnitSpan } from './unit-span';

const router = new SqlRouter({ dialect: 'postgresql', shardRules: [], multiShard: 'reject', cacheSize: 100 });
const routes = (...sql: string[]) => sql.map((s) => router.route(s));
const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('pg-edge');
const finished = () => exporter.getFinishedSpans();

beforeAll(() => installPropagation()); // as every runtime does at start
beforeEach(() => exporter.reset());

describe('UnitSpan', () => {
  it('names each statement of a unit once, by fingerprint, with the route, backend and pool wait', () => {
    const spans = new UnitSpan(tracer, { 'dbproxy.user': 'app' }, 'appdb');
    spans.begin(routes('SELECT * FROM t WHERE id = 7', 'SELECT * FROM t WHERE id = 8', "UPDATE t SET v = 'x' WHERE id = 9"));
    spans.acquiring('db-primary', '10.0.0.5:5432', 'primary', false);
    spans.waiting();
    spans.acquired();
    spans.end();
    expect(finished()).toHaveLength(3);
    const [wait, call, span] = finished();
    expect(span.name).toBe('SELECT t');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.attributes).toMatchObject({
      'db.system.name': 'postgresql',
      'db.operation.name': 'SELECT',
      'db.collection.name': 't',
      'db.namespace': 'appdb',
      'db.operation.batch.size': 2,
      'dbproxy.user': 'app',
      'db.query.text': 'SELECT * FROM t WHERE id = ?;\nUPDATE t SET v = ? WHERE id = ?',
      'dbproxy.statements': 2,
      'dbproxy.route': 'primary',
      'dbproxy.backend': 'db-primary',
    });
    expect(span.attributes['dbproxy.pool_wait_ms']).toBeGreaterThanOrEqual(0);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(wait).toMatchObject({ name: 'pool wait', kind: SpanKind.INTERNAL, parentSpanContext: expect.objectContaining({ spanId: span.spanContext().spanId }) });
    expect(call).toMatchObject({ name: 'SELECT t', kind: SpanKind.CLIENT, parentSpanContext: expect.objectContaining({ spanId: span.spanContext().spanId }) });
    expect(call.attributes).toMatchObject({ 'server.address': '10.0.0.5', 'server.port': 5432, 'dbproxy.backend': 'db-primary', 'db.system.name': 'postgresql' });
  });

  it('keeps one span across a batch continued after Flush, and marks units on a held connection', () => {
    const spans = new UnitSpan(tracer, {}, undefined);
    spans.begin(routes('SELECT 1'));
    spans.begin(routes('SELECT 2'));
    spans.onHeld('transaction', 'db-primary', '[::1]:5433');
    spans.end(undefined, '22012');
    expect(finished()).toHaveLength(2);
    const [call, span] = finished();
    expect(span.attributes).toMatchObject({ 'dbproxy.held': 'transaction', 'dbproxy.pool_wait_ms': 0, 'db.response.status_code': '22012', 'error.type': '22012' });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'SQLSTATE 22012' });
    expect(call.attributes).toMatchObject({ 'server.address': '::1', 'server.port': 5433, 'db.response.status_code': '22012' });
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('fails a unit refused through the held connection when the backend answers, and an abandoned one', () => {
    const spans = new UnitSpan(tracer, {}, undefined);
    spans.begin(routes('DELETE FROM t'));
    spans.refused(new Error('cannot write on the read-only listener'));
    spans.end();
    spans.begin(routes('SELECT pg_sleep(10)'));
    spans.abandon('client closed');
    spans.abandon('twice');
    expect(finished().map((s) => s.status.message)).toEqual(['cannot write on the read-only listener', 'client closed']);
  });

  it('continues a client trace from a sqlcommenter traceparent', () => {
    const spans = new UnitSpan(tracer, {}, undefined);
    spans.begin(routes("SELECT 1 /*traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'*/"));
    spans.end();
    expect(finished()[0].spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(finished()[0].parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
  });

  it('records nothing through the API no-op tracer (tracing off)', () => {
    const spans = new UnitSpan(trace.getTracer('pg-edge'), {}, undefined);
    for (const sql of ['SELECT 1', "SELECT 1 /*traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'*/"]) {
      spans.begin(routes(sql));
      spans.acquiring('r1', '127.0.0.1:1', 'replica', true);
      spans.acquired();
      spans.end(new Error('ignored'));
    }
    expect(finished()).toHaveLength(0);
  });
});
