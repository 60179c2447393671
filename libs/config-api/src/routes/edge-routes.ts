// GET /v1/edges: the live edge instances reported by heartbeats.
import type { FastifyInstance } from 'fastify';
import type { EdgeRegistry } from '../edge-registry';
import type { RouteGuards } from './guards';
import { schemas } from './schemas';

export function registerEdgeRoutes(app: FastifyInstance, edges: EdgeRegistry, guards: RouteGuards): void {
  app.get('/v1/edges', { preHandler: guards.read, schema: schemas.listEdges }, async () => ({ edges: edges.live() }));
}
