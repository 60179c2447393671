// GET /v1/edges: the live edge instances reported by heartbeats, keys in snake_case.
import type { FastifyInstance } from 'fastify';
import type { EdgeInstance, EdgeRegistry } from '../edge-registry';
import type { RouteGuards } from './guards';
import { backendSchemas } from './backend-schemas';

export function edgeView(e: EdgeInstance) {
  return {
    instance_id: e.instanceId,
    protocol: e.protocol,
    epoch: e.epoch,
    sessions: e.sessions,
    version: e.version,
    admin_address: e.adminAddress,
    started_at: e.startedAt,
    sent_at: e.sentAt,
    last_seen: e.lastSeen,
  };
}

export function registerEdgeRoutes(app: FastifyInstance, edges: EdgeRegistry, guards: RouteGuards): void {
  app.get('/v1/edges', { preHandler: guards.read, schema: backendSchemas.listEdges }, async () => ({ edges: edges.live().map(edgeView) }));
}
