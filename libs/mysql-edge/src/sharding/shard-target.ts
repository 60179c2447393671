// Which shard(s) a statement runs on, from the SQL router's decision: one shard (its key's, or the
// default shard for unsharded statements), every shard (a keyless read under multi_shard =
// "all_shards", rows concatenated), or a refusal naming the table and the reason (spec 000: fail closed).
import type { SqlRoute } from '@dbproxy/sql';
import type { DbproxyError } from '@dbproxy/util';
import { MysqlEdgeErrors } from '../errors';
import type { ShardSettings } from './shard-settings';

export type ShardTarget =
  /** `follows`: the statement names no sharded table, so a pinned session runs it where it is pinned. */
  | { readonly kind: 'one'; readonly shard: string; readonly follows: boolean }
  | { readonly kind: 'all'; readonly shards: readonly string[] }
  | { readonly kind: 'refused'; readonly error: DbproxyError };

const refused = (error: DbproxyError): ShardTarget => ({ kind: 'refused', error });

/** What a concatenation of every shard's rows cannot answer (the fingerprint's words, literals replaced). */
const NOT_CONCATENABLE: readonly (readonly [RegExp, string])[] = [
  [/\bORDER\s+BY\b/i, 'ORDER BY'],
  [/\bLIMIT\b/i, 'LIMIT'],
  [/\bGROUP\s+BY\b/i, 'GROUP BY'],
  [/\bHAVING\b/i, 'HAVING'],
  [/\bDISTINCT\b|\bDISTINCTROW\b/i, 'DISTINCT'],
  [/\bUNION\b|\bINTERSECT\b|\bEXCEPT\b/i, 'UNION/INTERSECT/EXCEPT'],
  [/\bOVER\s*\(/i, 'a window function'],
  [/\b(COUNT|SUM|MIN|MAX|AVG|GROUP_CONCAT|JSON_ARRAYAGG|JSON_OBJECTAGG|STD|STDDEV|STDDEV_POP|STDDEV_SAMP|VARIANCE|VAR_POP|VAR_SAMP|BIT_AND|BIT_OR|BIT_XOR)\s*\(/i, 'an aggregate'],
];

function shardedTables(route: SqlRoute, settings: ShardSettings): string[] {
  const names: string[] = [];
  for (const t of route.classification.tables) {
    const display = t.schema === undefined ? t.name : `${t.schema}.${t.name}`;
    if (settings.tables.has(t.name.toLowerCase()) && !names.includes(display)) names.push(display);
  }
  return names;
}

/** A keyless read as one concatenation of every shard's rows, or why it cannot be one. */
function everyShard(route: SqlRoute, settings: ShardSettings, tables: readonly string[]): ShardTarget | null {
  const c = route.classification;
  if (settings.multiShard !== 'all_shards' || c.family !== 'read' || c.command !== 'select' || c.statementCount !== 1) return null;
  if (tables.length > 1) return refused(MysqlEdgeErrors.shardJoin(tables.join(', ')));
  const text = route.fingerprint.text;
  for (const [pattern, what] of NOT_CONCATENABLE) if (pattern.test(text)) return refused(MysqlEdgeErrors.shardMerge(tables.join(', '), what));
  return { kind: 'all', shards: settings.allShards };
}

export function shardTarget(route: SqlRoute, defaultShard: string, settings: ShardSettings): ShardTarget {
  const decision = route.decision;
  switch (decision.kind) {
    case 'unsharded':
      return { kind: 'one', shard: defaultShard, follows: true };
    case 'shards': {
      if (decision.shards.length === 1) return { kind: 'one', shard: decision.shards[0] as string, follows: false };
      const tables = shardedTables(route, settings);
      if (tables.length > 1) return refused(MysqlEdgeErrors.shardJoin(tables.join(', ')));
      return refused(MysqlEdgeErrors.shardKeysSpread(tables.join(', ') || '?', decision.shards.join(', ')));
    }
    case 'all_shards': {
      const tables = shardedTables(route, settings);
      return everyShard(route, settings, tables) ?? refused(MysqlEdgeErrors.shardKeysSpread(tables.join(', '), `every shard: ${decision.reason}`));
    }
    case 'reject': {
      if (decision.error.code !== 'DBP_ERR_SQL_SHARD_KEY_MISSING') return refused(decision.error);
      const tables = shardedTables(route, settings);
      const all = everyShard(route, settings, tables);
      if (all !== null) return all;
      return refused(tables.length > 1 ? MysqlEdgeErrors.shardJoin(tables.join(', ')) : decision.error);
    }
  }
}

/** The metrics label of a refusal (dbproxy_mysql_shard_refusals_total{reason}). */
export function refusalReason(code: string): string {
  switch (code) {
    case 'DBP_ERR_SQL_SHARD_KEY_MISSING':
      return 'no_key';
    case 'DBP_ERR_SQL_SHARD_MULTI':
    case 'DBP_ERR_MYSQLEDGE_SHARD_KEYS_SPREAD':
      return 'several_shards';
    case 'DBP_ERR_SQL_SHARD_KEY_ASSIGNED':
      return 'key_assigned';
    case 'DBP_ERR_SQL_SHARD_KEY_UNMAPPED':
    case 'DBP_ERR_SQL_SHARD_KEY_INVALID':
    case 'DBP_ERR_SQL_SHARD_KEY_UNBOUND':
      return 'bad_key';
    case 'DBP_ERR_MYSQLEDGE_SHARD_JOIN':
      return 'join';
    case 'DBP_ERR_MYSQLEDGE_SHARD_MERGE':
      return 'merge';
    case 'DBP_ERR_MYSQLEDGE_SHARD_TRANSACTION':
      return 'transaction';
    case 'DBP_ERR_MYSQLEDGE_SHARD_DENIED':
      return 'user_shards';
    case 'DBP_ERR_SQL_SHARD_HINT_UNKNOWN':
    case 'DBP_ERR_SQL_SHARD_HINT_CONFLICT':
      return 'hint';
    default:
      return 'unsupported';
  }
}
