// StartupRoutes: [[postgres.routes]] over the startup shard key. The StartupMessage's `database`
// (PostgreSQL's default: the user name) and `user` pick the session's shard in both modes, before
// any authentication and before a backend is chosen; no match and no `route_default` is a 3D000.
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { StartupMessage } from '@dbproxy/protocol-pg';
import { HandshakeRoutes, NO_ROUTE } from '@dbproxy/routing';
import { PgEdgeErrors } from './errors';
import type { PgEdgeMetrics } from './metrics';
import { StartupShardKey, type ShardResolution } from './startup-shard-key';

export class StartupRoutes {
  private readonly shardKey: StartupShardKey;
  readonly routes: HandshakeRoutes;

  constructor(config: DeepReadonly<DbproxyConfig>) {
    const pg = config.postgres;
    this.shardKey = new StartupShardKey(pg.sharding);
    this.routes = new HandshakeRoutes(pg.routes, pg.route_default);
  }

  /** The startup must be read by the edge (shard key or routes), so the client's TLS cannot pass through to a backend. */
  get enabled(): boolean {
    return this.shardKey.enabled || this.routes.active;
  }

  /** The shard for this startup (its route's when routes are configured), the startup with the shard parameter removed. */
  resolve(startup: StartupMessage): ShardResolution {
    const resolution = this.shardKey.resolve(startup);
    if (!resolution.ok || !this.routes.active) return resolution;
    const user = startup.parameters.get('user') ?? '';
    const database = startup.parameters.get('database') ?? user;
    const route = this.routes.choose(database, user);
    if (route === null) return { ok: false, error: PgEdgeErrors.noRoute(database.slice(0, 64)), routeRefused: true };
    return { ...resolution, shard: route.shard, route };
  }
}

/** dbproxy_pg_route_sessions_total for one resolved (or refused) startup; nothing without routes. */
export function countRoute(metrics: PgEdgeMetrics, resolution: ShardResolution): void {
  if (resolution.ok && resolution.route) metrics.routeSessions.inc({ route: resolution.route.route, outcome: resolution.route.outcome });
  else if (!resolution.ok && resolution.routeRefused) metrics.routeSessions.inc({ route: NO_ROUTE, outcome: 'refused' });
}
