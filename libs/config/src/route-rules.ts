// Cross-field rules of [[mysql.routes]] / [[postgres.routes]]: a match field in every route, unique
// names, every named shard (and route_default) has backends, and no combination this build does
// not route (statement sharding rules, PostgreSQL's startup shard parameter).
import type { ConfigIssue } from './issues';
import type { HandshakeRouteConfig } from './schema/routes';
import type { DbproxyConfig } from './schema/root';

function checkRouteList(section: 'mysql' | 'postgres', routes: readonly HandshakeRouteConfig[], routeDefault: string | undefined, known: ReadonlySet<string>, issues: ConfigIssue[]): void {
  const backends = `${section}_backends`;
  const names = new Map<string, number>();
  routes.forEach((r, i) => {
    const path = `${section}.routes[${i}]`;
    if (r.database === undefined && r.user === undefined) issues.push({ path, message: `needs database, user or both to match (the shard of logins no route matches is ${section}.route_default)` });
    if (section === 'postgres' && r.auth !== undefined) issues.push({ path: `${path}.auth`, message: 'is MySQL only: pg-edge has no authentication passthrough in this build (it authenticates [[users]] itself)' });
    if (!known.has(r.shard)) issues.push({ path: `${path}.shard`, message: `shard "${r.shard}" has no backends in ${backends}` });
    const first = names.get(r.name);
    if (first !== undefined) issues.push({ path: `${path}.name`, message: `duplicate route name "${r.name}" (also ${section}.routes[${first}])` });
    else names.set(r.name, i);
  });
  if (routeDefault === undefined) return;
  if (routes.length === 0) issues.push({ path: `${section}.route_default`, message: `only applies to [[${section}.routes]]; there are none` });
  else if (!known.has(routeDefault)) issues.push({ path: `${section}.route_default`, message: `shard "${routeDefault}" has no backends in ${backends}` });
}

export function checkRoutes(c: DbproxyConfig, issues: ConfigIssue[]): void {
  checkRouteList('mysql', c.mysql.routes, c.mysql.route_default, new Set(c.mysql_backends.map((b) => b.shard)), issues);
  checkRouteList('postgres', c.postgres.routes, c.postgres.route_default, new Set(c.postgres_backends.map((b) => b.shard)), issues);
  if (c.mysql.routes.length > 0 && c.mysql.sharding.enabled) {
    issues.push({ path: 'mysql.routes', message: 'cannot be combined with [mysql.sharding] enabled = true in this build (a routed session has one shard; statement sharding spans several)' });
  }
  const pg = c.postgres.sharding;
  if (c.postgres.routes.length > 0 && (pg.enabled || pg.rules.length > 0)) {
    issues.push({ path: 'postgres.routes', message: 'cannot be combined with [postgres.sharding] enabled = true or [[postgres.sharding.rules]] in this build (a routed session has one shard)' });
  }
}
