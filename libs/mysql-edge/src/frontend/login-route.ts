// What a login's handshake route ([[mysql.routes]]) leaves in operations: the metric by route and
// outcome, and the fields of the session's log lines.
import { NO_ROUTE, type RouteChoice } from '@dbproxy/routing';
import type { EdgeMetrics } from '../metrics';

/** Counts a login that chose `route` (null: routes are off, nothing to count). */
export function countRoute(metrics: EdgeMetrics, route: RouteChoice | null): void {
  if (route !== null) metrics.routeSessions.inc({ route: route.route, outcome: route.outcome });
}

/** Counts a login refused because no route matched (ERR 1049). */
export function countRouteRefused(metrics: EdgeMetrics): void {
  metrics.routeSessions.inc({ route: NO_ROUTE, outcome: 'refused' });
}

/** `route` and `shard` for session_opened / session_closed events, when the session was routed. */
export function routeFields(route: RouteChoice | null): { route?: string; shard?: string } {
  return route === null ? {} : { route: route.route, shard: route.shard };
}
