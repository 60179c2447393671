// Cross-field rules zod cannot express: one primary per shard, unique names, distinct
// listeners, and every shard that a rule, fanout or deployment names must exist.
import type { ConfigIssue } from './issues';
import { checkRoutes } from './route-rules';
import { shardsOfMap, type ShardMapConfig } from './schema/common';
import type { DbproxyConfig } from './schema/root';

interface NamedBackend {
  name: string;
  role: 'primary' | 'replica';
  shard: string;
}

function checkBackends(section: string, backends: readonly NamedBackend[], issues: ConfigIssue[]): void {
  const seen = new Map<string, number>();
  const primaries = new Map<string, number>();
  const shards = new Map<string, number>();
  backends.forEach((b, i) => {
    const first = seen.get(b.name);
    if (first !== undefined) issues.push({ path: `${section}[${i}].name`, message: `duplicate backend name "${b.name}" (also ${section}[${first}])` });
    else seen.set(b.name, i);
    if (!shards.has(b.shard)) shards.set(b.shard, i);
    if (b.role !== 'primary') return;
    const other = primaries.get(b.shard);
    if (other !== undefined) issues.push({ path: `${section}[${i}].role`, message: `shard "${b.shard}" already has a primary (${section}[${other}])` });
    else primaries.set(b.shard, i);
  });
  for (const [shard, index] of shards) {
    if (!primaries.has(shard)) issues.push({ path: `${section}[${index}].shard`, message: `shard "${shard}" has no primary` });
  }
}

function checkShardNames(path: string, named: readonly string[], known: ReadonlySet<string>, where: string, issues: ConfigIssue[]): void {
  named.forEach((shard, i) => {
    if (!known.has(shard)) issues.push({ path: `${path}[${i}]`, message: `shard "${shard}" has no backends in ${where}` });
  });
}

function checkShardMap(path: string, map: ShardMapConfig, known: ReadonlySet<string>, where: string, issues: ConfigIssue[]): void {
  const field = map.kind === 'hash' ? 'shards' : map.kind === 'range' ? 'ranges' : 'values';
  for (const shard of new Set(shardsOfMap(map))) {
    if (!known.has(shard)) issues.push({ path: `${path}.${field}`, message: `shard "${shard}" has no backends in ${where}` });
  }
}

/** Fanout targets name shards with backends, once each; fanout names are unique; mode = "xa" needs [mysql.xa] enabled. */
function checkFanouts(c: DbproxyConfig, known: ReadonlySet<string>, issues: ConfigIssue[]): void {
  const names = new Map<string, number>();
  c.mysql.fanout.forEach((f, i) => {
    checkShardNames(`mysql.fanout[${i}].targets`, f.targets, known, 'mysql_backends', issues);
    f.targets.forEach((t, j) => {
      if (f.targets.indexOf(t) !== j) issues.push({ path: `mysql.fanout[${i}].targets[${j}]`, message: `shard "${t}" is listed twice` });
    });
    // mode = "xa" statements go to the xa-coordinator, which serves nothing with [mysql.xa] enabled = false
    if (f.mode === 'xa' && !c.mysql.xa.enabled) issues.push({ path: `mysql.fanout[${i}].mode`, message: 'mode = "xa" needs [mysql.xa] enabled = true (and the xa-coordinator service running): without it every statement on the table would be refused' });
    const first = names.get(f.name);
    if (first !== undefined) issues.push({ path: `mysql.fanout[${i}].name`, message: `duplicate fanout name "${f.name}" (also mysql.fanout[${first}])` });
    else names.set(f.name, i);
  });
}

const shardSet = (backends: readonly NamedBackend[]) => new Set(backends.map((b) => b.shard));

function checkMysql(c: DbproxyConfig, issues: ConfigIssue[]): void {
  const known = shardSet(c.mysql_backends);
  const names = new Set(c.mysql_backends.map((b) => b.name));
  if (c.mysql.enabled && c.mysql_backends.length === 0) issues.push({ path: 'mysql.enabled', message: 'needs at least one [[mysql_backends]] entry' });
  const sharding = c.mysql.sharding;
  c.mysql.sharding.rules.forEach((rule, i) => checkShardMap(`mysql.sharding.rules[${i}].map`, rule.map, known, 'mysql_backends', issues));
  // every statement runs on default_shard (no sharding in this build): it must have backends
  if ((sharding.enabled || (c.mysql.enabled && known.size > 0)) && !known.has(sharding.default_shard)) {
    issues.push({ path: 'mysql.sharding.default_shard', message: `shard "${sharding.default_shard}" has no backends in mysql_backends` });
  }
  checkFanouts(c, known, issues);
  const cacheBackend = c.mysql.cache.redis_backend;
  if (c.mysql.cache.enabled && (cacheBackend === undefined || !c.redis_backends.some((b) => b.name === cacheBackend))) {
    issues.push({ path: 'mysql.cache.redis_backend', message: 'must name a [[redis_backends]] entry when the cache is enabled' });
  }
  const cacheRedis = c.redis_backends.find((b) => b.name === cacheBackend);
  if (c.mysql.cache.enabled && cacheRedis?.tls.enabled) {
    issues.push({ path: 'mysql.cache.redis_backend', message: 'a [[redis_backends]] entry with TLS is not implemented for the result cache in this build yet' });
  }
  c.bgd_deployments.forEach((d, i) => {
    const refs: [string, string | undefined][] = [
      ['blue_writer', d.blue_writer],
      ['green_writer', d.green_writer],
      ...d.blue_readers.map((r, j): [string, string] => [`blue_readers[${j}]`, r]),
      ...d.green_readers.map((r, j): [string, string] => [`green_readers[${j}]`, r]),
    ];
    for (const [key, ref] of refs) {
      if (ref !== undefined && !names.has(ref)) issues.push({ path: `bgd_deployments[${i}].${key}`, message: `no [[mysql_backends]] entry named "${ref}"` });
    }
  });
}

function checkPostgres(c: DbproxyConfig, issues: ConfigIssue[]): void {
  const known = shardSet(c.postgres_backends);
  if (c.postgres.enabled && c.postgres_backends.length === 0) issues.push({ path: 'postgres.enabled', message: 'needs at least one [[postgres_backends]] entry' });
  const sharding = c.postgres.sharding;
  if (sharding.map) checkShardMap('postgres.sharding.map', sharding.map, known, 'postgres_backends', issues);
  if (sharding.enabled && !sharding.map) issues.push({ path: 'postgres.sharding.map', message: 'required when sharding is enabled' });
  sharding.rules.forEach((rule, i) => checkShardMap(`postgres.sharding.rules[${i}].map`, rule.map, known, 'postgres_backends', issues));
  if (sharding.rules.length > 0 && c.postgres.routing_mode !== 'transaction') {
    issues.push({ path: 'postgres.sharding.rules', message: 'statement sharding rules are honoured only in routing_mode = "transaction" (transparent mode relays the wire and does not route statements)' });
  }
  if (sharding.rules.length > 0 && sharding.enabled) {
    issues.push({ path: 'postgres.sharding.rules', message: 'cannot be combined with enabled = true (a shard chosen by startup parameter); choose statement rules or the startup parameter' });
  }
  if (sharding.multi_shard !== 'reject' && sharding.rules.length === 0) {
    issues.push({ path: 'postgres.sharding.multi_shard', message: 'only applies to [[postgres.sharding.rules]]; there are none' });
  }
  // without a shard map every connection goes to default_shard (with [[postgres.routes]]: to its route's shard)
  const usesDefault = sharding.enabled ? sharding.missing === 'default' : (c.postgres.enabled && known.size > 0 && c.postgres.routes.length === 0) || sharding.rules.length > 0;
  if (usesDefault && !known.has(sharding.default_shard)) {
    issues.push({ path: 'postgres.sharding.default_shard', message: `shard "${sharding.default_shard}" has no backends in postgres_backends` });
  }
  const databases = new Map<string, string>();
  c.postgres_backends.forEach((b, i) => {
    const db = databases.get(b.shard);
    if (db === undefined) databases.set(b.shard, b.database);
    else if (db !== b.database) issues.push({ path: `postgres_backends[${i}].database`, message: `every backend of shard "${b.shard}" must name database "${db}"` });
  });
}

function checkRedis(c: DbproxyConfig, issues: ConfigIssue[]): void {
  const known = shardSet(c.redis_backends);
  if (c.redis.enabled && !c.redis.cluster.enabled && c.redis_backends.length === 0) {
    issues.push({ path: 'redis.enabled', message: 'needs at least one [[redis_backends]] entry or [redis.cluster]' });
  }
  if (c.redis.cluster.enabled && c.redis.mode !== 'command') issues.push({ path: 'redis.cluster.enabled', message: 'a Redis Cluster needs redis.mode = "command"' });
  if (c.redis.cache.enabled && c.redis.mode !== 'command') issues.push({ path: 'redis.cache.enabled', message: 'the reply cache needs redis.mode = "command" (connection mode pipes bytes unread)' });
  const sharding = c.redis.sharding;
  if (sharding.map && !c.redis.cluster.enabled) checkShardMap('redis.sharding.map', sharding.map, known, 'redis_backends', issues);
  if (c.redis.enabled && !c.redis.cluster.enabled && sharding.missing === 'default' && !known.has(sharding.default_shard) && known.size > 0) {
    issues.push({ path: 'redis.sharding.default_shard', message: `shard "${sharding.default_shard}" has no backends in redis_backends` });
  }
}

function checkUniqueNames(path: string, names: readonly string[], what: string, issues: ConfigIssue[]): void {
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (seen.has(n)) issues.push({ path: `${path}[${i}].name`, message: `duplicate ${what} "${n}"` });
    seen.add(n);
  });
}

/** Runs every cross-field rule; returns all issues at once. */
/** A monitor password means nothing without the monitor user it belongs to (at the same level). */
function checkMonitorAccounts(c: DbproxyConfig, issues: ConfigIssue[]): void {
  const levels: [string, { monitor_username?: string | undefined; monitor_password?: string | undefined }][] = [['mysql', c.mysql], ...c.mysql_backends.map((b, i) => [`mysql_backends[${i}]`, b] as [string, typeof b])];
  for (const [path, level] of levels) {
    if (level.monitor_password !== undefined && level.monitor_username === undefined) issues.push({ path: `${path}.monitor_password`, message: 'monitor_password needs monitor_username beside it' });
  }
}

export function checkRules(c: DbproxyConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  checkMonitorAccounts(c, issues);
  checkBackends('mysql_backends', c.mysql_backends, issues);
  checkBackends('postgres_backends', c.postgres_backends, issues);
  checkBackends('redis_backends', c.redis_backends, issues);
  checkMysql(c, issues);
  checkPostgres(c, issues);
  checkRoutes(c, issues);
  checkRedis(c, issues);
  checkUniqueNames('users', c.users.map((u) => u.name), 'user', issues);
  checkUniqueNames('config_api.tokens', c.config_api.tokens.map((t) => t.name), 'token name', issues);
  checkUniqueNames('bgd_deployments', c.bgd_deployments.map((d) => d.name), 'deployment', issues);
  return issues;
}
