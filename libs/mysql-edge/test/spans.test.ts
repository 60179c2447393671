// A span per query: the statement's fingerprint (never its literals), route, backend and pool
// wait; a sqlcommenter traceparent continues the client's trace. Spans are recorded in memory by a
// tracer provider registered before the runtime starts (the same spans go to OTLP when
// [telemetry] otlp_endpoint is set).
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { SpanKind } from '@opentelemetry/api';
import { startMariaDb, waitFor } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' },
      { name: 'replica', host: db.replicas[0]!.host, port: db.replicas[0]!.port, role: 'replica' },
    ],
    'read_after_write_seconds = 0',
  );
});

afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

const statement = (s: ReadableSpan) => String(s.attributes['db.query.text']);

it('records one span per query with fingerprint, route, backend and pool wait; a traceparent comment continues the trace', async () => {
  exporter.reset();
  const c = await edge.connect();
  await c.query("SELECT 'secret-literal' AS s, 42 AS n");
  await c.execute('SELECT ? + 1 AS n', [41]);
  await c.query('CREATE DATABASE IF NOT EXISTS spans');
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  await c.query(`/*traceparent='00-${traceId}-00f067aa0ba902b7-01'*/ SELECT 7 AS n`);
  await c.end();
  const spans = await waitFor(() => {
    const finished = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
    return finished.length >= 5 ? finished : false;
  });
  const read = spans.find((s) => statement(s).startsWith('SELECT ? AS s'));
  expect(read).toBeDefined();
  expect(JSON.stringify(read?.attributes)).not.toContain('secret-literal');
  expect(read?.name).toBe('SELECT');
  expect(read?.attributes).toMatchObject({ 'db.system.name': 'mariadb', 'db.operation.name': 'SELECT', 'dbproxy.route': 'replica', 'dbproxy.backend': 'replica', 'dbproxy.listener': 'read_write' });
  expect(read?.attributes['dbproxy.pool_wait_ms']).toEqual(expect.any(Number));
  const execute = spans.find((s) => statement(s) === 'SELECT ? + ? AS n' && s.attributes['db.operation.name'] === 'SELECT');
  expect(statement(execute as ReadableSpan)).toBe('SELECT ? + ? AS n');
  expect(spans.find((s) => s.name === 'PREPARE SELECT')).toBeDefined();
  const ddl = spans.find((s) => statement(s).startsWith('CREATE DATABASE'));
  expect(ddl?.attributes).toMatchObject({ 'dbproxy.route': 'primary', 'dbproxy.backend': 'primary' });
  const continued = spans.find((s) => statement(s) === 'SELECT ? AS n');
  expect(continued?.spanContext().traceId).toBe(traceId);
  expect(continued?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
});
