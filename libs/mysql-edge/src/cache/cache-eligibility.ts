// Which statements the MySQL result cache may answer, and which writes invalidate it: a single
// autocommit, replica-safe, deterministic SELECT whose tables are all in [mysql.cache] tables is
// cacheable; a write, DDL or routine call that may touch a cached table bumps those tables.
import type { Classification, SqlRoute } from '@dbproxy/sql';

/** Why a SELECT was not looked up in the cache (metrics label `reason`). */
export type BypassReason = 'unavailable' | 'transaction' | 'not_cacheable' | 'nondeterministic' | 'table_not_cached' | 'no_database';

/**
 * Functions and words whose value is not a function of the data: the replica-safety rules let
 * them through (a replica computes them as well as the primary), the cache must not.
 */
const NONDETERMINISTIC =
  /\b(now|sysdate|curdate|curtime|current_date|current_time|current_timestamp|current_user|current_role|localtime|localtimestamp|utc_date|utc_time|utc_timestamp|unix_timestamp|rand|random_bytes|uuid|uuid_short|sys_guid|user|session_user|system_user|connection_id|benchmark|sleep|found_rows|row_count|last_insert_id|get_lock|master_pos_wait|nextval|lastval|setval)\b/i;

/** Unsafe reasons that make a read's answer depend on more than the data. */
const STATEFUL: ReadonlySet<string> = new Set(['state_function', 'user_variable', 'session_variable', 'sequence_function', 'lock_function', 'side_effect_function']);

/** Unsafe reasons after which a statement may write tables the classifier could not name. */
const OPAQUE_WRITERS: ReadonlySet<string> = new Set(['procedure_call', 'user_function', 'compound_statement', 'parse_failed', 'too_complex', 'multi_statement', 'unterminated']);

/** `schema.table` as generation keys name it (lower case: table names compare case-insensitively on the default lower_case_table_names). */
export function tableKey(schema: string, table: string): string {
  return `${schema}.${table}`.toLowerCase();
}

export interface CacheScope {
  /** `schema.table` entries of [mysql.cache] tables, lower case. */
  readonly tables: ReadonlySet<string>;
}

/** The generation keys of a cacheable SELECT, or why it is not looked up. */
export function readTables(route: SqlRoute, schema: string | null, scope: CacheScope): string[] | BypassReason {
  const c = route.classification;
  if (c.family !== 'read' || c.command !== 'select' || c.statementCount !== 1) return 'not_cacheable';
  const text = route.fingerprint.text;
  if (NONDETERMINISTIC.test(text) || text.includes('@') || c.unsafeReasons.some((r) => STATEFUL.has(r.code))) return 'nondeterministic';
  if (!c.replicaSafe || c.locking || c.tables.length === 0) return 'not_cacheable';
  const keys: string[] = [];
  for (const t of c.tables) {
    const db = t.schema ?? schema;
    if (db === null) return 'no_database';
    const key = tableKey(db, t.name);
    if (!scope.tables.has(key)) return 'table_not_cached';
    if (!keys.includes(key)) keys.push(key);
  }
  return keys.sort();
}

/** The cached tables a statement may change when it succeeds (every cached table when it cannot tell). */
export function writtenTables(c: Classification, schema: string | null, scope: CacheScope): string[] {
  if (scope.tables.size === 0) return [];
  const opaque = c.unsafeReasons.some((r) => OPAQUE_WRITERS.has(r.code));
  if (!opaque && (c.family === 'read' || c.family === 'transaction' || c.family === 'session_setting' || c.family === 'utility')) return [];
  if (!opaque && c.family === 'session_state' && c.tables.length === 0) return [];
  if (opaque || c.tables.length === 0) return [...scope.tables];
  const keys = new Set<string>();
  for (const t of c.tables) {
    const db = t.schema ?? schema;
    // a table without a database the edge knows: any cached table of that name
    if (db === null) {
      for (const k of scope.tables) if (k.endsWith(`.${t.name.toLowerCase()}`)) keys.add(k);
    } else if (scope.tables.has(tableKey(db, t.name))) keys.add(tableKey(db, t.name));
  }
  return [...keys];
}
