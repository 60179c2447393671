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

/** The fanouts a statement matches; `ambiguous` ones name their table in a multi-table UPDATE/DELETE. */
export interface FanoutMatch {
  readonly rules: FanoutRule[];
  readonly ambiguous: FanoutRule[];
}

const NONE: FanoutMatch = { rules: [], ambiguous: [] };

/**
 * The rules whose table `c` writes; `schema` is the session's database, for tables the statement
 * does not qualify. Names compare exactly (as MariaDB on Linux with lower_case_table_names = 0).
 * A multi-statement request counts every table it writes. A multi-table UPDATE or DELETE that
 * names the fanout table is `ambiguous` (the session refuses it rather than guess): the classifier
 * lists its written table by alias (`DELETE a FROM audit_log a JOIN ...`) or, reading it from
 * tokens, takes the first table as the written one whatever SET names.
 */
export function matchingRules(rules: readonly FanoutRule[], c: Classification, schema: string | null): FanoutMatch {
  if (rules.length === 0 || (!isDml(c) && c.statementCount <= 1)) return NONE;
  // a multi-table UPDATE/DELETE: the classifier may list the written table by its alias or not at all
  const multiTable = (c.command === 'update' || c.command === 'delete') && c.tables.length > 1;
  const matched: FanoutRule[] = [];
  const ambiguous: FanoutRule[] = [];
  for (const rule of rules) {
    const named = c.tables.filter((t) => t.name === rule.table && (rule.schema === null || (t.schema ?? schema) === rule.schema));
    if (named.length > 0 && multiTable) ambiguous.push(rule);
    else if (named.some((t) => t.access === 'write')) matched.push(rule);
  }
  return matched.length === 0 && ambiguous.length === 0 ? NONE : { rules: matched, ambiguous };
}
