// [mysql.sharding] as the edge uses it: the SQL router's shard rules, the tables they name (for
// errors that name them), and each user's reachable shards ([[users]] shards).
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import { shardMapSpecFromSettings, type ShardMapSpec, type ShardRule } from '@dbproxy/routing';


export interface ShardSettings {
  /** Sharding is on and has rules: statements are routed by key, transactions start lazily. */
  readonly active: boolean;
  readonly rules: readonly ShardRule[];
  /** Every shard of the rules' maps (what a keyless read under multi_shard = "all_shards" runs on). */
  readonly allShards: readonly string[];
  readonly multiShard: 'all_shards' | 'reject';
  /** Lower-case bare names of sharded tables. */
  readonly tables: ReadonlySet<string>;
  /** users[].shards of the users limited to some shards (the others reach every shard). */
  readonly userShards: ReadonlyMap<string, ReadonlySet<string>>;
}

function shardsOf(spec: ShardMapSpec): string[] {
  if (spec.kind === 'hash') return spec.shards;
  if (spec.kind === 'range') return spec.ranges.map((r) => r.shard);
  return [...Object.values(spec.values), ...(spec.defaultShard === undefined ? [] : [spec.defaultShard])];
}

export function shardSettingsOf(config: DeepReadonly<DbproxyConfig>): ShardSettings {
  const sharding = config.mysql.sharding;
  const rules: ShardRule[] = sharding.enabled ? sharding.rules.map((r) => ({ table: r.table, column: r.column, map: shardMapSpecFromSettings(r.map) })) : [];
  const allShards = [...new Set(rules.flatMap((r) => shardsOf(r.map)))];
  const tables = new Set(rules.map((r) => (r.table.split('.').pop() as string).toLowerCase()));
  const userShards = new Map(config.users.filter((u) => u.shards.length > 0).map((u) => [u.name, new Set(u.shards)]));
  return { active: rules.length > 0, rules, allShards, multiShard: sharding.multi_shard, tables, userShards };
}
