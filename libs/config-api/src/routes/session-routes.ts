// Operations over the live edges: GET /v1/sessions and /v1/pools (every live edge asked at once,
// each bounded by config_api.edge_request_timeout_seconds), DELETE /v1/sessions/{id},
// POST /v1/edges/{id}/pause|resume and GET /v1/actions.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Bus, Protocol } from '@dbproxy/bus';
import { poolJson, sessionJson } from '@dbproxy/runtime';
import { recordAction, type ActionKind, type ActionLog } from '../action-log';
import type { EdgeInstance, EdgeRegistry } from '../edge-registry';
import { askEdges, edgeStatusJson } from '../edge-requests';
import type { RouteGuards } from './guards';
import { sessionSchemas } from './session-schemas';

export interface SessionRouteDeps {
  readonly bus: Bus;
  readonly edges: EdgeRegistry;
  readonly actions: ActionLog;
  readonly guards: RouteGuards;
  /** config_api.edge_request_timeout_seconds, in ms. */
  edgeTimeoutMs(): number;
}

interface EdgeFilter {
  edge?: string;
  protocol?: Protocol;
}

/** Session ids start with their protocol's letter (SessionIds in @dbproxy/runtime). */
const ID_PROTOCOL: Readonly<Record<string, Protocol>> = { m: 'mysql', p: 'postgres', r: 'redis' };
const DEFAULT_KILL_REASON = 'closed by an administrator';

function selectEdges(edges: EdgeRegistry, filter: EdgeFilter): EdgeInstance[] {
  return edges.live().filter((e) => (filter.edge === undefined || e.instanceId === filter.edge) && (filter.protocol === undefined || e.protocol === filter.protocol));
}

export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const { bus, edges, actions, guards } = deps;

  app.get<{ Querystring: EdgeFilter & { user?: string; backend?: string } }>('/v1/sessions', { preHandler: guards.read, schema: sessionSchemas.listSessions }, async (request) => {
    const { user, backend } = request.query;
    const answers = await askEdges(bus, selectEdges(edges, request.query), { action: 'sessions' }, deps.edgeTimeoutMs());
    const now = Date.now();
    const sessions = answers.flatMap((a) =>
      (a.reply?.sessions ?? []).filter((s) => (user === undefined || s.user === user) && (backend === undefined || s.backend === backend)).map((s) => ({ edge: a.edge, protocol: a.protocol, ...sessionJson(s, now) })),
    );
    return { edges: answers.map(edgeStatusJson), sessions };
  });

  app.get<{ Querystring: EdgeFilter & { backend?: string } }>('/v1/pools', { preHandler: guards.read, schema: sessionSchemas.listPools }, async (request) => {
    const { backend } = request.query;
    const answers = await askEdges(bus, selectEdges(edges, request.query), { action: 'pools' }, deps.edgeTimeoutMs());
    const pools = answers.flatMap((a) => (a.reply?.pools ?? []).filter((p) => backend === undefined || p.backend === backend).map((p) => ({ edge: a.edge, protocol: a.protocol, ...poolJson(p) })));
    return { edges: answers.map(edgeStatusJson), pools };
  });

  app.delete<{ Params: { id: string }; Body: { reason?: string } | null }>('/v1/sessions/:id', { preHandler: guards.write, schema: sessionSchemas.killSession }, async (request, reply) => {
    const id = request.params.id;
    const reason = request.body?.reason?.trim() || DEFAULT_KILL_REASON;
    const protocol = ID_PROTOCOL[id.charAt(0)];
    const candidates = protocol ? selectEdges(edges, { protocol }) : [];
    const answers = await askEdges(bus, candidates, { action: 'kill', session: id, reason }, deps.edgeTimeoutMs());
    const owner = answers.find((a) => a.reply?.killed === true);
    const token = request.caller?.name ?? 'unknown';
    if (owner) {
      recordAction(actions, token, 'kill', id, 'ok');
      return { killed: id, edge: owner.edge };
    }
    const silent = answers.filter((a) => a.status !== 'ok').length;
    recordAction(actions, token, 'kill', id, 'not_found');
    const unanswered = silent > 0 ? ` (${silent} edge instance(s) did not answer in time)` : '';
    return reply.code(404).send({ error: 'not_found', message: `no live edge has session ${id}${unanswered}` });
  });

  const pauseOrResume = async (action: Extract<ActionKind, 'pause' | 'resume'>, edgeId: string, token: string, reply: FastifyReply, holdSeconds?: number) => {
    const targets = selectEdges(edges, { edge: edgeId });
    if (targets.length === 0) {
      recordAction(actions, token, action, edgeId, 'not_found');
      return reply.code(404).send({ error: 'not_found', message: `no live edge instance is called ${edgeId} (GET /v1/edges lists them)` });
    }
    const request = action === 'pause' ? { action, ...(holdSeconds !== undefined ? { holdSeconds } : {}) } : { action };
    const answers = await askEdges(bus, targets, request, deps.edgeTimeoutMs());
    const failed = answers.find((a) => a.status !== 'ok');
    if (failed) {
      recordAction(actions, token, action, edgeId, failed.status);
      return reply.code(504).send({ error: `edge_${failed.status}`, message: `${failed.protocol} edge ${edgeId} did not confirm the ${action} (${failed.status})` });
    }
    recordAction(actions, token, action, edgeId, 'ok');
    return { edge: edgeId, paused: action === 'pause' };
  };

  app.post<{ Params: { id: string }; Body: { timeout_seconds?: number } | null }>('/v1/edges/:id/pause', { preHandler: guards.write, schema: sessionSchemas.pauseEdge }, async (request, reply) =>
    pauseOrResume('pause', request.params.id, request.caller?.name ?? 'unknown', reply, request.body?.timeout_seconds),
  );

  app.post<{ Params: { id: string } }>('/v1/edges/:id/resume', { preHandler: guards.write, schema: sessionSchemas.resumeEdge }, async (request, reply) => pauseOrResume('resume', request.params.id, request.caller?.name ?? 'unknown', reply));

  app.get('/v1/actions', { preHandler: guards.read, schema: sessionSchemas.listActions }, async () => ({ actions: actions.list() }));
}
