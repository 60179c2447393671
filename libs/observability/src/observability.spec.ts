import { channel } from 'node:diagnostics_channel';
import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Channels, transitionTally } from '@dbproxy/util';
import { contextFromTraceparent, createLogger, MetricsRegistry, observeLibraryChannels, startTracing } from './index';

function captureLogs(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('metrics', () => {
  it('exposes default process metrics and custom counters in the text format', async () => {
    const metrics = new MetricsRegistry({ service: 'test' });
    metrics.counter({ name: 'dbproxy_test_total', help: 'test', labelNames: ['kind'] }).inc({ kind: 'a' }, 3);
    // get-or-create: a second call returns the same metric instead of throwing
    metrics.counter({ name: 'dbproxy_test_total', help: 'test', labelNames: ['kind'] }).inc({ kind: 'a' });
    const { body, contentType } = await metrics.exposition();
    expect(contentType).toMatch(/^text\/plain/);
    expect(body).toContain('dbproxy_test_total{kind="a",service="test"} 4');
    expect(body).toContain('process_cpu_user_seconds_total');
  });
});

describe('diagnostics channels', () => {
  it('counts and logs dropped bus messages', async () => {
    const metrics = new MetricsRegistry();
    const { lines, stream } = captureLogs();
    const logger = createLogger({ level: 'info', service: 'svc', instance: 'i1', destination: stream });
    const stop = observeLibraryChannels(logger, metrics);
    channel(Channels.busMessageDropped).publish({ subject: 'dbproxy.health.mysql.a', reason: 'schema: missing field' });
    stop();
    channel(Channels.busMessageDropped).publish({ subject: 'x', reason: 'ignored after stop' });
    await new Promise((r) => setImmediate(r));
    expect((await metrics.exposition()).body).toContain('dbproxy_bus_messages_dropped_total{reason="schema"} 1');
    expect(lines).toEqual([expect.objectContaining({ msg: 'bus message dropped', subject: 'dbproxy.health.mysql.a', service: 'svc' })]);
  });

  it('exports the state transition tallies per kind and target state, counting only growth at each scrape', async () => {
    const metrics = new MetricsRegistry();
    const { stream } = captureLogs();
    const stop = observeLibraryChannels(createLogger({ level: 'info', service: 'svc', instance: 'i1', destination: stream }), metrics);
    const session = transitionTally('spec-session');
    for (let i = 0; i < 3; i++) session.count('busy');
    session.count('idle');
    transitionTally('spec-backend').count('busy');
    let body = (await metrics.exposition()).body;
    expect(body).toContain('dbproxy_state_transitions_total{kind="spec-session",to="busy"} 3');
    expect(body).toContain('dbproxy_state_transitions_total{kind="spec-session",to="idle"} 1');
    expect(body).toContain('dbproxy_state_transitions_total{kind="spec-backend",to="busy"} 1');
    session.count('busy');
    body = (await metrics.exposition()).body;
    expect(body).toContain('dbproxy_state_transitions_total{kind="spec-session",to="busy"} 4');
    expect(body).toContain('dbproxy_state_transitions_total{kind="spec-session",to="idle"} 1');
    stop();
  });

  it('subscribes to each state transition only when the log level shows it', async () => {
    const transitions = channel(Channels.stateTransition);
    const { stream: quiet } = captureLogs();
    const stopInfo = observeLibraryChannels(createLogger({ level: 'info', service: 'svc', instance: 'i1', destination: quiet }), new MetricsRegistry());
    expect(transitions.hasSubscribers).toBe(false);
    stopInfo();
    const { lines, stream } = captureLogs();
    const stopDebug = observeLibraryChannels(createLogger({ level: 'debug', service: 'svc', instance: 'i1', destination: stream }), new MetricsRegistry());
    transitions.publish({ kind: 'session', id: 4, from: 'idle', to: 'running', reason: 'query' });
    stopDebug();
    expect(transitions.hasSubscribers).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(lines).toEqual(expect.arrayContaining([expect.objectContaining({ msg: 'state transition', kind: 'session', id: 4, from: 'idle', to: 'running', reason: 'query' })]));
  });

  it('redacts passwords in logged objects', async () => {
    const { lines, stream } = captureLogs();
    createLogger({ level: 'info', service: 's', instance: 'i', destination: stream }).info({ backend: { password: 'hunter2' } }, 'x');
    await new Promise((r) => setImmediate(r));
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });
});

describe('tracing', () => {
  it('continues a client trace from a sqlcommenter traceparent', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: 't', serviceNamespace: 'dbproxy', instance: 'i', sampleRatio: 1, maxExportBatchSize: 10, exporter });
    const parent = contextFromTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    tracing.tracer('test').startSpan('query', undefined, parent).end();
    await tracing.flush();
    const [span] = exporter.getFinishedSpans();
    await tracing.shutdown();
    expect(span?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    trace.disable();
    context.disable();
  });

  it('ignores a malformed traceparent', () => {
    const base = context.active();
    expect(contextFromTraceparent('00-zz-1-01', undefined, base)).toBe(base);
  });
});
