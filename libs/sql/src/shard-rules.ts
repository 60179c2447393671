// The configured sharded tables, resolved: which rule (if any) a table reference falls under.
import { createShardMap, type ShardMap, type ShardRule } from '@dbproxy/routing';
import { InvalidRouterOptions } from './errors';

export interface ResolvedRule {
  readonly schema?: string;
  readonly table: string;
  readonly column: string;
  readonly map: ShardMap;
  /** `schema.table` or `table`, as configured. */
  readonly display: string;
}

const NAME = /^[A-Za-z0-9_$]+$/;

/**
 * Rules keyed by table name, compared case-insensitively. A bare rule matches the table in any
 * schema; a `schema.table` rule matches references qualified with that schema and unqualified
 * ones (the session's database may be that schema), so sharding fails closed.
 */
export class ShardRuleSet {
  readonly allShards: readonly string[];
  private readonly byTable = new Map<string, ResolvedRule[]>();

  constructor(rules: readonly ShardRule[]) {
    const shards = new Set<string>();
    for (const [i, rule] of rules.entries()) {
      const parts = typeof rule.table === 'string' ? rule.table.split('.') : [];
      if (parts.length < 1 || parts.length > 2 || !parts.every((p) => NAME.test(p))) {
        throw InvalidRouterOptions(`shardRules[${i}].table must be "table" or "schema.table", got ${JSON.stringify(rule.table)}`);
      }
      if (typeof rule.column !== 'string' || !NAME.test(rule.column)) throw InvalidRouterOptions(`shardRules[${i}].column is not a column name`);
      const table = parts[parts.length - 1].toLowerCase();
      const schema = parts.length === 2 ? parts[0].toLowerCase() : undefined;
      const existing = this.byTable.get(table) ?? [];
      if (existing.some((r) => r.schema === schema)) throw InvalidRouterOptions(`table ${rule.table} has two shard rules`);
      const map = createShardMap(rule.map);
      map.shards.forEach((s) => shards.add(s));
      existing.push({ schema, table, column: rule.column.toLowerCase(), map, display: rule.table });
      this.byTable.set(table, existing);
    }
    this.allShards = [...shards];
  }

  get empty(): boolean {
    return this.byTable.size === 0;
  }

  /** Whether a (lower-case) bare table name has any rule. */
  hasTable(name: string): boolean {
    return this.byTable.has(name);
  }

  /** The rule for a reference, `ambiguous` when several schema rules could apply, else undefined. */
  match(schema: string | undefined, table: string): ResolvedRule | 'ambiguous' | undefined {
    const candidates = this.byTable.get(table.toLowerCase());
    if (candidates === undefined) return undefined;
    if (schema !== undefined) {
      const s = schema.toLowerCase();
      return candidates.find((r) => r.schema === s) ?? candidates.find((r) => r.schema === undefined);
    }
    if (candidates.length === 1) return candidates[0];
    return 'ambiguous';
  }
}
