// Prometheus metrics of the config-api's HTTP server: requests by route template, method and status,
// and their latency. Every route's latency series exist from start (at zero).
import type { FastifyInstance } from 'fastify';
import type { MetricsRegistry } from '@dbproxy/observability';

/** Buckets for an API answered from memory or the KV: 1 ms … 10 s. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A request no route matched (404) is counted under this route, not under its raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';

export function registerHttpMetrics(app: FastifyInstance, metrics: MetricsRegistry): void {
  const requests = metrics.counter({ name: 'dbproxy_config_api_requests_total', help: 'config-api HTTP requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'] });
  const latency = metrics.histogram({
    name: 'dbproxy_config_api_request_duration_seconds',
    help: 'config-api HTTP request latency (request received to response sent), by route template and method',
    labelNames: ['route', 'method'],
    buckets: HTTP_BUCKETS,
  });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) if (method !== 'HEAD') latency.zero({ route: route.url, method });
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    latency.observe({ route, method: request.method }, reply.elapsedTime / 1000);
    done();
  });
}
