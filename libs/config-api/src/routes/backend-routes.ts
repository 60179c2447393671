// GET /v1/backends (configured backends with topology's health) and POST
// /v1/backends/{name}/drain|undrain (a new epoch with the backend's status changed).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import { recordAction, type ActionLog } from '../action-log';
import type { BackendHealthBoard, Protocol } from '../backend-health';
import { withBackendStatus } from '../backend-status';
import type { ConfigStore } from '../config-store';
import type { RouteGuards } from './guards';
import { backendSchemas } from './backend-schemas';

export interface BackendRouteDeps {
  readonly store: ConfigStore;
  readonly health: BackendHealthBoard;
  readonly actions: ActionLog;
  /** The configuration this process runs on, used when the KV holds none yet. */
  readonly fallbackConfig: () => DeepReadonly<DbproxyConfig>;
}

type StatusRequest = FastifyRequest<{ Params: { name: string }; Querystring: { protocol?: Protocol } }>;

/** Compare-and-set attempts when other writers move the epoch under a drain. */
const WRITE_ATTEMPTS = 5;

async function configInForce(deps: BackendRouteDeps): Promise<DeepReadonly<DbproxyConfig>> {
  const current = await deps.store.read();
  if (!current) return deps.fallbackConfig();
  const parsed = deps.store.validate(current.record.config);
  return parsed.ok ? parsed.config : deps.fallbackConfig();
}

async function changeStatus(deps: BackendRouteDeps, request: StatusRequest, reply: FastifyReply, status: 'online' | 'offline_soft') {
  const { name } = request.params;
  const action = status === 'online' ? 'undrain' : 'drain';
  const fail = (code: number, error: string, message: string) => {
    recordAction(deps.actions, request.caller?.name ?? 'unknown', action, name, error);
    return reply.code(code).send({ error, message });
  };
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const current = await deps.store.read();
    if (!current) return fail(404, 'no_config', 'no configuration has been published yet');
    const change = withBackendStatus(current.record.config, name, status, request.query.protocol);
    switch (change.kind) {
      case 'not_found':
        return fail(404, 'unknown_backend', `no backend named "${name}"${request.query.protocol ? ` in ${request.query.protocol}` : ''}`);
      case 'ambiguous':
        return fail(409, 'ambiguous_backend', `backends named "${name}" exist for ${change.protocols.join(' and ')}; add ?protocol=`);
      case 'refused':
        return fail(409, 'backend_offline_hard', change.message);
      case 'unchanged':
        recordAction(deps.actions, request.caller?.name ?? 'unknown', action, name, 'ok');
        return reply.send({ backend: name, protocol: change.protocol, status, epoch: current.epoch, changed: false });
      case 'changed': {
        const outcome = await deps.store.write({ document: change.document, author: request.caller?.name ?? 'unknown', expectedEpoch: current.epoch });
        if (outcome.kind === 'stale') continue;
        if (outcome.kind === 'invalid') return fail(400, 'invalid_config', outcome.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
        recordAction(deps.actions, request.caller?.name ?? 'unknown', action, name, 'ok');
        return reply.send({ backend: name, protocol: change.protocol, status, epoch: outcome.epoch, changed: outcome.kind === 'applied' });
      }
    }
  }
  return fail(409, 'stale_epoch', 'the configuration kept changing under the request; retry');
}

export function registerBackendRoutes(app: FastifyInstance, deps: BackendRouteDeps, guards: RouteGuards): void {
  app.get<{ Querystring: { protocol?: Protocol } }>('/v1/backends', { preHandler: guards.read, schema: backendSchemas.listBackends }, async (request) => {
    const backends = deps.health.view(await configInForce(deps));
    const { protocol } = request.query;
    return { backends: protocol ? backends.filter((b) => b.protocol === protocol) : backends };
  });
  app.post<{ Params: { name: string }; Querystring: { protocol?: Protocol } }>(
    '/v1/backends/:name/drain',
    { preHandler: guards.write, schema: backendSchemas.drainBackend },
    (request, reply) => changeStatus(deps, request, reply, 'offline_soft'),
  );
  app.post<{ Params: { name: string }; Querystring: { protocol?: Protocol } }>(
    '/v1/backends/:name/undrain',
    { preHandler: guards.write, schema: backendSchemas.undrainBackend },
    (request, reply) => changeStatus(deps, request, reply, 'online'),
  );
}
