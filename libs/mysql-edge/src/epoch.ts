// One configuration epoch as sessions see it: settings, frontend accounts, backends, the SQL
// router and the backend directory. A session holds the epoch it runs on; a pinned session keeps
// its epoch until the pin ends, others move to the newest one at their next statement.
import type { ConfigSnapshot, DbproxyConfig, DeepReadonly, MysqlBackendConfig } from '@dbproxy/config';
import { CACHING_SHA2_PLUGIN, NATIVE_PASSWORD_PLUGIN, type AccountCredential } from '@dbproxy/protocol-mysql';
import type { PipelineDepthSetting } from '@dbproxy/pool';
import { HandshakeRoutes } from '@dbproxy/routing';
import { SqlRouter } from '@dbproxy/sql';
import type { TopologyView } from '@dbproxy/topology-client';
import { BackendDirectory } from './routing/backend-directory';
import { shardSettingsOf, type ShardSettings } from './sharding/shard-settings';

export interface EdgeLimits {
  readonly maxPacketBytes: number;
  readonly queryTimeoutMs: number;
  readonly clientReadTimeoutMs: number;
  readonly clientWriteTimeoutMs: number;
  readonly loginTimeoutMs: number;
  readonly maxStatements: number;
  readonly maxStatementBytes: number;
  readonly readAfterWriteMs: number;
  /** read_consistency = "causal": reads check the replica applied the session's last write (src/causal). */
  readonly causal: boolean;
  readonly causalWaitMs: number;
  /** Autocommit reads per lending of a saturated pool's connection ([mysql] pipeline_depth: "auto" follows the pool's waiters; N fixed; 1 = off). */
  readonly pipelineDepth: PipelineDepthSetting;
}

export interface EdgeEpoch {
  readonly epoch: number;
  readonly config: DeepReadonly<DbproxyConfig>;
  readonly backends: ReadonlyMap<string, DeepReadonly<MysqlBackendConfig>>;
  readonly accounts: ReadonlyMap<string, AccountCredential>;
  readonly router: SqlRouter;
  readonly directory: BackendDirectory;
  readonly defaultShard: string;
  /** [[mysql.routes]] and route_default: the shard a login's database and user choose. */
  readonly routes: HandshakeRoutes;
  /** Every shard's index in a cached statement's plan variants (the default shard is 0). */
  readonly shardSlots: ReadonlyMap<string, number>;
  /** [mysql.sharding]: rules, every shard, users' reachable shards. */
  readonly sharding: ShardSettings;
  readonly fallbackToPrimary: boolean;
  readonly multiStatements: 'reject' | 'primary';
  readonly limits: EdgeLimits;
  /** Plans of unsharded statements by classification (cached shapes keep their object), 8 variants each. */
  readonly plans: WeakMap<object, unknown[]>;
}

function accountsOf(config: DeepReadonly<DbproxyConfig>): Map<string, AccountCredential> {
  const accounts = new Map<string, AccountCredential>();
  for (const user of config.users) {
    const account: AccountCredential =
      user.mysql_auth_plugin === 'mysql_native_password' ? { plugin: NATIVE_PASSWORD_PLUGIN, password: user.password } : { plugin: CACHING_SHA2_PLUGIN, password: user.password };
    accounts.set(user.name, account);
  }
  return accounts;
}

function shardSlotsOf(defaultShard: string, allShards: readonly string[], backends: readonly { readonly shard: string }[]): Map<string, number> {
  const slots = new Map<string, number>([[defaultShard, 0]]);
  allShards.forEach((shard, i) => slots.has(shard) || slots.set(shard, 1 + i));
  let next = 1 + allShards.length;
  for (const b of backends) if (!slots.has(b.shard)) slots.set(b.shard, next++);
  return slots;
}

/** Settings the SQL router is built from: unchanged settings keep the router and its warm cache. */
function routerKey(config: DeepReadonly<DbproxyConfig>): string {
  const m = config.mysql;
  return JSON.stringify([m.classification_cache_size, m.allowed_functions, m.sharding, m.max_parse_tokens], (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export function buildEpoch(snapshot: ConfigSnapshot, topology: () => TopologyView, previous: EdgeEpoch | undefined): EdgeEpoch {
  const config = snapshot.config;
  const m = config.mysql;
  const sameRouter = previous !== undefined && routerKey(previous.config) === routerKey(config);
  // enabled, multi_shard and rules of [mysql.sharding] decide the router's shard routing
  const sharding = shardSettingsOf(config);
  const router = sameRouter
    ? previous.router
    : new SqlRouter({ dialect: 'mysql', shardRules: sharding.rules, multiShard: m.sharding.multi_shard, cacheSize: m.classification_cache_size, allowedFunctions: [...m.allowed_functions], maxParseTokens: m.max_parse_tokens });
  const health = config.health;
  const suspectMs = Math.max(2_000, health.interval_seconds * 1000 * (health.failures_before_down + 1));
  const directory =
    previous !== undefined && previous.config.mysql.pressure_margin === m.pressure_margin ? previous.directory : new BackendDirectory(topology, m.pressure_margin, suspectMs);
  return {
    epoch: snapshot.epoch,
    config,
    backends: new Map(config.mysql_backends.map((b) => [b.name, b])),
    accounts: accountsOf(config),
    router,
    directory,
    defaultShard: m.sharding.default_shard,
    routes: new HandshakeRoutes(m.routes, m.route_default),
    shardSlots: shardSlotsOf(m.sharding.default_shard, sharding.allShards, config.mysql_backends),
    sharding,
    fallbackToPrimary: m.fallback_to_primary,
    multiStatements: m.multi_statements,
    plans: new WeakMap(),
    limits: {
      maxPacketBytes: m.max_packet_bytes,
      queryTimeoutMs: m.query_timeout_seconds * 1000,
      clientReadTimeoutMs: config.proxy.client_read_timeout_seconds * 1000,
      clientWriteTimeoutMs: config.proxy.client_write_timeout_seconds * 1000,
      loginTimeoutMs: Math.max(10_000, m.connect_timeout_seconds * 2000),
      maxStatements: m.max_prepared_statements,
      pipelineDepth: m.pipeline_depth,
      maxStatementBytes: m.max_prepared_statement_bytes,
      readAfterWriteMs: m.read_after_write_seconds * 1000,
      causal: m.read_consistency === 'causal',
      causalWaitMs: m.causal_wait_ms,
    },
  };
}
