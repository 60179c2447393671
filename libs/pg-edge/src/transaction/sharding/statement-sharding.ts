// Statement-level sharding in transaction mode ([postgres.sharding] rules): the shard one unit of
// work runs on, from the SqlRouter's decisions of its statements, the transaction's shard and the user's shards.
import type { DeepReadonly, PostgresConfig } from '@dbproxy/config';
import { shardMapSpecFromSettings, type ShardRule } from '@dbproxy/routing';
import type { SqlRoute } from '@dbproxy/sql';
import { PgEdgeErrors } from '../../errors';
import { crossShardMergeProblem } from './cross-shard-merge';

type ShardingConfig = DeepReadonly<PostgresConfig['sharding']>;

/** Where a unit runs: one shard, every listed shard (a keyless read, rows concatenated), or refused. */
export type UnitShard =
  | { readonly kind: 'one'; readonly shard: string }
  | { readonly kind: 'fanout'; readonly shards: readonly string[] }
  | { readonly kind: 'refuse'; readonly error: Error; readonly reason: string };

/** The SqlRouter's rules from `[[postgres.sharding.rules]]` (table, column, map), in configuration order. */
export function routerRulesOf(sharding: ShardingConfig): ShardRule[] {
  return sharding.rules.map((rule) => ({ table: rule.table, column: rule.column, map: shardMapSpecFromSettings(rule.map) }));
}

/** The metric reason of a router refusal, from its error code. */
const REASONS: Readonly<Record<string, string>> = {
  DBP_ERR_SQL_SHARD_KEY_MISSING: 'shard_key_missing',
  DBP_ERR_SQL_SHARD_MULTI: 'multi_shard',
  DBP_ERR_SQL_SHARD_KEY_ASSIGNED: 'shard_key_assigned',
  DBP_ERR_SQL_SHARD_KEY_UNMAPPED: 'shard_key_unmapped',
  DBP_ERR_SQL_SHARD_KEY_INVALID: 'shard_key_invalid',
  DBP_ERR_SQL_SHARD_KEY_UNBOUND: 'shard_key_unbound',
  DBP_ERR_SQL_SHARD_UNSUPPORTED: 'shard_unsupported',
  DBP_ERR_SQL_SHARD_HINT_UNKNOWN: 'shard_hint',
  DBP_ERR_SQL_SHARD_HINT_CONFLICT: 'shard_hint',
};

const refusal = (error: Error, reason: string): UnitShard => ({ kind: 'refuse', error, reason });

/** One session's view of the rules: default shard, multi_shard, the shards its user may reach. */
export class StatementSharding {
  readonly defaultShard: string;
  private readonly multiShard: 'all_shards' | 'reject';
  /** Lower-case bare table name -> the shards its rule's map names. */
  private readonly tableShards = new Map<string, string[]>();

  constructor(
    sharding: ShardingConfig,
    private readonly user: { readonly name: string; readonly shards: readonly string[] },
  ) {
    this.defaultShard = sharding.default_shard;
    this.multiShard = sharding.multi_shard;
    for (const rule of sharding.rules) {
      const table = rule.table.split('.').pop()?.toLowerCase() ?? '';
      this.tableShards.set(table, [...new Set([...(this.tableShards.get(table) ?? []), ...shardsOfMap(rule.map)])]);
    }
  }

  /** True when the configuration has statement rules (the session routes per statement). */
  static active(sharding: ShardingConfig): boolean {
    return sharding.rules.length > 0;
  }

  /**
   * The shard of a unit whose statements (simple query, or the bound executions of a batch) are
   * `routes`; `held` is the shard of the connection the session holds (an open transaction or a pin).
   * A statement that names no table (BEGIN, COMMIT, SET, SELECT 1) follows the held connection.
   */
  unitShard(routes: readonly SqlRoute[], held: string | undefined): UnitShard {
    let shard: string | undefined;
    for (const route of routes) {
      const one = this.statementShard(route, held);
      if (one.kind === 'refuse') return one;
      if (one.kind === 'fanout') {
        if (routes.length > 1) return refusal(PgEdgeErrors.shardSpan('a batch with a read on several shards'), 'multi_shard');
        if (held !== undefined) return refusal(PgEdgeErrors.shardSpan('a read on several shards inside a transaction'), 'multi_shard');
        return this.allowed(one);
      }
      if (one.shard === undefined) continue;
      if (shard !== undefined && shard !== one.shard) return refusal(PgEdgeErrors.shardSpan(`one batch with statements on shards ${shard} and ${one.shard}`), 'multi_shard');
      shard = one.shard;
    }
    const chosen = shard ?? held ?? this.defaultShard;
    if (held !== undefined && chosen !== held) return refusal(PgEdgeErrors.shardCrossTransaction(chosen, held), 'cross_shard_transaction');
    return this.allowed({ kind: 'one', shard: chosen });
  }

  private allowed(unit: UnitShard & { kind: 'one' | 'fanout' }): UnitShard {
    const shards = this.user.shards;
    if (shards.length === 0) return unit;
    const wanted = unit.kind === 'one' ? [unit.shard] : unit.shards;
    const forbidden = wanted.find((s) => !shards.includes(s));
    return forbidden === undefined ? unit : refusal(PgEdgeErrors.shardForbidden(this.user.name, forbidden), 'shard_forbidden');
  }

  /** One statement: a shard, no preference (undefined: it names no table), every shard, or a refusal. */
  private statementShard(route: SqlRoute, held: string | undefined): { kind: 'one'; shard: string | undefined } | UnitShard {
    const decision = route.decision;
    const c = route.classification;
    switch (decision.kind) {
      case 'unsharded':
        return { kind: 'one', shard: c.tables.length === 0 ? undefined : this.defaultShard };
      case 'reject': {
        const every = decision.error.code === 'DBP_ERR_SQL_SHARD_KEY_MISSING' ? this.keylessRead(route) : undefined;
        if (every !== undefined) return this.severalShards(route, every, held);
        return refusal(decision.error, REASONS[decision.error.code] ?? 'shard_unsupported');
      }
      case 'shards':
        if (decision.shards.length === 1) return { kind: 'one', shard: decision.shards[0] };
        return this.severalShards(route, decision.shards, held);
      case 'all_shards':
        return this.severalShards(route, decision.shards, held);
    }
  }

  /**
   * With multi_shard = "all_shards", a read of one sharded table without a key runs on every shard
   * of its map; joins and sub-queries stay refused (their rows could pair across shards).
   */
  private keylessRead(route: SqlRoute): string[] | undefined {
    const c = route.classification;
    if (this.multiShard !== 'all_shards' || c.family !== 'read' || c.tables.length !== 1) return undefined;
    const text = route.fingerprint.text.toLowerCase();
    if (/\bjoin\b/.test(text) || (text.match(/\bselect\b/g) ?? []).length > 1 || /\bfrom\b[^()]*,/.test(text)) return undefined;
    return this.tableShards.get(c.tables[0].name.toLowerCase());
  }

  private severalShards(route: SqlRoute, shards: readonly string[], held: string | undefined): UnitShard {
    const c = route.classification;
    const what = `${c.command.toUpperCase()} with keys on shards ${shards.join(', ')}`;
    if (this.multiShard === 'reject') return refusal(PgEdgeErrors.shardSpan(`${what} (multi_shard = "reject")`), 'multi_shard');
    if (c.family !== 'read' || c.locking) return refusal(PgEdgeErrors.shardSpan(`${what}: only reads run on several shards`), 'multi_shard');
    if (held !== undefined) return refusal(PgEdgeErrors.shardSpan(`${what} inside a transaction`), 'multi_shard');
    const merge = crossShardMergeProblem(route.fingerprint.text);
    if (merge !== undefined) return refusal(PgEdgeErrors.shardMerge(merge), 'cross_shard_merge');
    return { kind: 'fanout', shards };
  }
}

function shardsOfMap(map: ShardingConfig['rules'][number]['map']): string[] {
  switch (map.kind) {
    case 'hash':
      return [...map.shards];
    case 'range':
      return map.ranges.map((r) => r.shard);
    case 'value':
      return [...Object.values(map.values), ...(map.default_shard === undefined ? [] : [map.default_shard])];
  }
}
