// The config-api service: the REST API (Fastify) over the versioned configuration.
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { RunningService, ServiceContext, ServiceDefinition } from '@dbproxy/runtime';
import { splitListen } from '@dbproxy/runtime';
import { errorMessage } from '@dbproxy/util';
import { requireRole } from './auth';
import { ConfigStore } from './config-store';
import { EdgeRegistry } from './edge-registry';
import { registerHttpMetrics } from './http-metrics';
import { registerConfigRoutes } from './routes/config-routes';
import { registerEdgeRoutes } from './routes/edge-routes';

export interface ConfigApi {
  readonly app: FastifyInstance;
  readonly address: string;
}

async function buildApi(ctx: ServiceContext, store: ConfigStore, edges: EdgeRegistry): Promise<FastifyInstance> {
  const api = () => ctx.config.current().config.config_api;
  const app = Fastify({ logger: false, bodyLimit: api().max_body_bytes });
  registerHttpMetrics(app, ctx.metrics);
  app.addContentTypeParser(['application/toml', 'text/plain'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  await app.register(swagger, {
    openapi: {
      info: { title: 'dbproxy config-api', version: ctx.version, description: 'Versioned configuration of dbproxy; every change is a new epoch.' },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    },
  });
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) ctx.logger.error({ err: err.message }, 'config-api request failed');
    const unavailable = typeof err.code === 'string' && err.code.startsWith('DBP_ERR_BUS');
    return reply.code(unavailable ? 503 : status).send({ error: unavailable ? 'bus_unavailable' : (err.code ?? 'error'), message: err.message });
  });
  const guards = { read: requireRole('read', api), write: requireRole('write', api) };
  registerConfigRoutes(app, store, guards);
  registerEdgeRoutes(app, edges, guards);
  app.get('/docs/json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

export const configApiService: ServiceDefinition = {
  name: 'config-api',
  adminKey: 'config_api',
  async start(ctx: ServiceContext): Promise<RunningService> {
    const settings = () => ctx.config.current().config.config_api;
    const store = await ConfigStore.open(ctx.bus, ctx.env, () => settings().history_limit);
    const edges = new EdgeRegistry(() => settings().edge_heartbeat_ttl_seconds * 1000);
    const subscriptions = [edges.start(ctx.bus), store.followIntoHistory((err) => ctx.logger.warn({ err: errorMessage(err) }, 'history record failed'))];
    const app = await buildApi(ctx, store, edges);
    const listen = splitListen(ctx.local.config_api.listen);
    const address = await app.listen({ host: listen.host, port: listen.port });
    ctx.logger.info({ address }, 'config-api listening');
    ctx.readiness.set('api', 'ready');
    return {
      async drain() {
        await app.close();
      },
      async close() {
        for (const s of subscriptions) s.unsubscribe();
        await app.close();
      },
    };
  },
};
