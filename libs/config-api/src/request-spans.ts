// A SERVER span per config-api HTTP request (HTTP semantic conventions: `{method} {route}`,
// http.request.method, http.route, url.path, http.response.status_code, error.type on 5xx). A
// caller's W3C `traceparent` header is continued, and the handler runs in the span's context so
// that bus requests it makes carry it on.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const SPAN = Symbol('dbproxy request span');
type TracedRequest = FastifyRequest & { [SPAN]?: Span };

const headerGetter = {
  keys: (carrier: FastifyRequest['headers']) => Object.keys(carrier),
  get: (carrier: FastifyRequest['headers'], key: string) => carrier[key],
};

export function traceRequests(app: FastifyInstance, tracer: Tracer, listen: { host: string; port: number }): void {
  app.addHook('onRequest', (req: TracedRequest, _reply, done) => {
    const parent = propagation.extract(context.active(), req.headers, headerGetter);
    const route = req.routeOptions.url ?? 'unmatched';
    const span = tracer.startSpan(`${req.method} ${route}`, { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) return done();
    span.setAttributes({
      'http.request.method': req.method,
      'http.route': route,
      'url.path': req.url.split('?', 1)[0] ?? req.url,
      'url.scheme': 'http',
      'server.address': listen.host,
      'server.port': listen.port,
      'client.address': req.ip,
    });
    req[SPAN] = span;
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (req: TracedRequest, reply, done) => {
    const span = req[SPAN];
    if (span !== undefined) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) {
        span.setAttribute('error.type', String(reply.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
    done();
  });
  app.addHook('onRequestAbort', (req: TracedRequest, done) => {
    const span = req[SPAN];
    if (span !== undefined && span.isRecording()) {
      span.setAttribute('error.type', 'aborted');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'client aborted the request' });
      span.end();
    }
    done();
  });
}
