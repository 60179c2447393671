// The config-api service: the REST API (Fastify) over the versioned configuration.
import Fastify, { type FastifyInstance } from 'fastify';
import type { RunningService, ServiceContext, ServiceDefinition } from '@dbproxy/runtime';
import { splitListen } from '@dbproxy/runtime';
import { errorMessage } from '@dbproxy/util';
import { ActionLog } from './action-log';
import { requireRole } from './auth';
import { ConfigStore } from './config-store';
import { EdgeRegistry } from './edge-registry';
import { registerOpenApi } from './openapi';
import { BackendHealthBoard } from './backend-health';
import { registerBackendRoutes } from './routes/backend-routes';
import { checkListenExposure } from './listen-guard';
import { registerHttpMetrics } from './http-metrics';
import { registerConfigRoutes } from './routes/config-routes';
import { registerEdgeRoutes } from './routes/edge-routes';
import { registerSessionRoutes } from './routes/session-routes';
import { traceRequests } from './request-spans';

export interface ConfigApi {
  readonly app: FastifyInstance;
  readonly address: string;
}

interface ApiParts {
  readonly health: BackendHealthBoard;
  readonly actions: ActionLog;
}

async function buildApi(ctx: ServiceContext, store: ConfigStore, edges: EdgeRegistry, parts: ApiParts): Promise<FastifyInstance> {
  const api = () => ctx.config.current().config.config_api;
  const app = Fastify({ logger: false, bodyLimit: api().max_body_bytes });
  traceRequests(app, ctx.tracer, splitListen(ctx.local.config_api.listen));
  registerHttpMetrics(app, ctx.metrics);
  app.addContentTypeParser(['application/toml', 'text/plain'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  await registerOpenApi(app, { version: ctx.version, listen: ctx.local.config_api.listen });
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) ctx.logger.error({ err: err.message }, 'config-api request failed');
    const unavailable = typeof err.code === 'string' && err.code.startsWith('DBP_ERR_BUS');
    return reply.code(unavailable ? 503 : status).send({ error: unavailable ? 'bus_unavailable' : (err.code ?? 'error'), message: err.message });
  });
  const guards = { read: requireRole('read', api), write: requireRole('write', api) };
  registerConfigRoutes(app, store, guards);
  registerEdgeRoutes(app, edges, guards);
  registerSessionRoutes(app, { bus: ctx.bus, edges, actions: parts.actions, guards, edgeTimeoutMs: () => api().edge_request_timeout_seconds * 1000 });
  registerBackendRoutes(app, { store, ...parts, fallbackConfig: () => ctx.config.current().config }, guards);
  return app;
}

export const configApiService: ServiceDefinition = {
  name: 'config-api',
  adminKey: 'config_api',
  async start(ctx: ServiceContext): Promise<RunningService> {
    const settings = () => ctx.config.current().config.config_api;
    // before anything opens: the listener is the file's, the tokens the epoch's in force
    checkListenExposure({ ...settings(), listen: ctx.local.config_api.listen });
    const store = await ConfigStore.open(ctx.bus, ctx.env, () => settings().history_limit);
    const edges = new EdgeRegistry(() => settings().edge_heartbeat_ttl_seconds * 1000);
    // A health report older than three check rounds no longer says anything: health `unknown`.
    const health = new BackendHealthBoard(() => 3 * (ctx.config.current().config.health.interval_seconds + ctx.config.current().config.health.timeout_seconds) * 1000);
    const subscriptions = [edges.start(ctx.bus), health.start(ctx.bus), store.followIntoHistory((err) => ctx.logger.warn({ err: errorMessage(err) }, 'history record failed'))];
    const actions = new ActionLog(() => settings().action_log_limit, ctx.logger);
    const app = await buildApi(ctx, store, edges, { health, actions });
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
