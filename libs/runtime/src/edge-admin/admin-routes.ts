// The edge admin interface of this process's edge services: GET /sessions and GET /pools on the
// admin HTTP server (all edges of the process), and each edge's per-instance admin subject.
import type { RouteOptions } from 'fastify';
import { serveMessages, Subjects, type Bus, type Subscription } from '@dbproxy/bus';
import type { EdgeAdmin } from './edge-admin';
import { poolJson, sessionJson } from './session-report';

/** How long GET /sessions and GET /pools wait for each worker process. */
const HTTP_BUDGET_MS = 2_000;

export function edgeAdminRoutes(admins: readonly EdgeAdmin[]): RouteOptions[] {
  return [
    {
      method: 'GET',
      url: '/sessions',
      handler: async () => {
        const replies = await Promise.all(admins.map((a) => a.sessions(HTTP_BUDGET_MS)));
        const now = Date.now();
        return {
          edges: replies.map((r) => ({ protocol: r.protocol, paused: r.paused, statements_total: r.statementsTotal })),
          sessions: replies.flatMap((r) => (r.sessions ?? []).map((s) => ({ protocol: r.protocol, ...sessionJson(s, now) }))),
        };
      },
    },
    {
      method: 'GET',
      url: '/pools',
      handler: async () => {
        const replies = await Promise.all(admins.map((a) => a.pools(HTTP_BUDGET_MS)));
        return { pools: replies.flatMap((r) => (r.pools ?? []).map((p) => ({ protocol: r.protocol, ...poolJson(p) }))) };
      },
    },
  ];
}

/** Answers `dbproxy.edges.<instance>.<protocol>.admin` for each edge service of this process. */
export function serveEdgeAdmin(bus: Bus, instanceId: string, admins: readonly EdgeAdmin[]): Subscription[] {
  return admins.map((admin) =>
    serveMessages(bus, Subjects.edgeAdmin.pattern({ instance: instanceId, protocol: admin.protocol }), async (request) => {
      // the caller's budget, less a margin for the reply's way back
      const budget = Math.max(100, Math.floor(request.deadlineMs * 0.8));
      switch (request.action) {
        case 'sessions':
          return admin.sessions(budget);
        case 'pools':
          return admin.pools(budget);
        case 'kill':
          return admin.kill(request.session, request.reason, budget);
        case 'pause':
          return admin.pause(request.holdSeconds, budget);
        case 'resume':
          return admin.resume(budget);
      }
    }),
  );
}
