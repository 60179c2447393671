// The [[mysql.fanout]] entries of a configuration epoch as the edge uses them, and which of them a
// statement matches: an INSERT, UPDATE, DELETE or REPLACE that writes the fanout's table.
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { Classification } from '@dbproxy/sql';

export interface FanoutRule {
  /** `name` of the [[mysql.fanout]] entry (metrics label `fanout`). */
  readonly name: string;
  /** The `table` key split: null schema = the table in whichever database the statement writes it. */
  readonly schema: string | null;
  readonly table: string;
  /** Shards whose primary receives each copy (`targets`). */
  readonly targets: readonly string[];
  readonly mode: 'best_effort' | 'xa';
  /** Copies in flight at once for this fanout in one process (`concurrency`). */
  readonly concurrency: number;
  /** How long a client waits for its copies (`timeout_seconds`), queue wait included. */
  readonly timeoutMs: number;
  /** Bound on the copies one client transaction queues until COMMIT (`max_transaction_bytes`). */
  readonly maxTransactionBytes: number;
}

const DML: ReadonlySet<string> = new Set(['insert', 'update', 'delete', 'replace']);
const cache = new WeakMap<object, readonly FanoutRule[]>();

/** The rules of a configuration (made once per configuration object). */
export function fanoutRules(config: DeepReadonly<DbproxyConfig>): readonly FanoutRule[] {
  const cached = cache.get(config);
  if (cached !== undefined) return cached;
  const rules = config.mysql.fanout.map((f): FanoutRule => {
    const dot = f.table.indexOf('.');
    return {
      name: f.name,
      schema: dot < 0 ? null : f.table.slice(0, dot),
      table: dot < 0 ? f.table : f.table.slice(dot + 1),
      targets: [...f.targets],
      mode: f.mode,
      concurrency: f.concurrency,
      timeoutMs: f.timeout_seconds * 1000,
      maxTransactionBytes: f.max_transaction_bytes,
    };
  });
  cache.set(config, rules);
  return rules;
}

/** Whether `c` is a DML statement that may write a fanout table at all (cheap test first on the hot path). */
export function isDml(c: Classification): boolean {
  return c.family === 'write' && DML.has(c.command);
}

/**
 * The rules whose table `c` writes; `schema` is the session's database, for tables the statement
 * does not qualify. Names compare exactly (as MariaDB on Linux with lower_case_table_names = 0).
 */
export function matchingRules(rules: readonly FanoutRule[], c: Classification, schema: string | null): FanoutRule[] {
  const matched: FanoutRule[] = [];
  if (rules.length === 0 || !isDml(c)) return matched;
  for (const rule of rules) {
    for (const t of c.tables) {
      if (t.access !== 'write' || t.name !== rule.table) continue;
      if (rule.schema !== null && (t.schema ?? schema) !== rule.schema) continue;
      matched.push(rule);
      break;
    }
  }
  return matched;
}
