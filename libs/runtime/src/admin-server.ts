// Admin HTTP for every service: /healthz, /readyz (503 with reasons), /metrics, plus routes
// services add (e.g. GET /postgres/backends).
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import type { Readiness } from './readiness';

export interface AdminServerOptions {
  readonly readiness: Readiness;
  readonly metricsText: () => Promise<{ contentType: string; body: string }>;
  readonly requestTimeoutMs: number;
  readonly routes: readonly RouteOptions[];
}

export function buildAdminServer(opts: AdminServerOptions): FastifyInstance {
  const app = Fastify({ logger: false, requestTimeout: opts.requestTimeoutMs, connectionTimeout: opts.requestTimeoutMs });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const report = opts.readiness.report();
    return reply.code(report.ready ? 200 : 503).send(report);
  });
  app.get('/metrics', async (_req, reply) => {
    const { contentType, body } = await opts.metricsText();
    return reply.type(contentType).send(body);
  });
  for (const route of opts.routes) app.route(route);
  return app;
}

/** Splits `host:port` for Fastify's listen. */
export function splitListen(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '*' || host === '' ? '0.0.0.0' : host, port: Number(address.slice(at + 1)) };
}
