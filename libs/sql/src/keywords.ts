// SQL keywords: the words the fingerprint upper-cases and the analyzers recognize, looked up without allocating.

/** Every keyword, upper case. Its id is its index + 1 (0 means "not a keyword"). */
export const KEYWORD_LIST = [
  'ABORT', 'ALL', 'ALTER', 'ANALYZE', 'AND', 'ANY', 'ARRAY', 'AS', 'ASC', 'AUTHORIZATION', 'BEGIN', 'BETWEEN', 'BY', 'CALL',
  'CASCADE', 'CASE', 'CAST', 'CHAIN', 'CHARACTER', 'CHARSET', 'CHECK', 'CHECKPOINT', 'CLOSE', 'CLUSTER', 'COLLATE',
  'COMMENT', 'COMMIT', 'CONFLICT', 'CONSISTENT', 'CONSTRAINT', 'COPY', 'CREATE', 'CROSS', 'CURRENT_DATE', 'CURRENT_TIME',
  'CURRENT_TIMESTAMP', 'CURRENT_USER', 'CURSOR', 'DATABASE', 'DATE', 'DEALLOCATE', 'DECLARE', 'DEFAULT', 'DELAYED',
  'DELETE', 'DESC', 'DESCRIBE', 'DISCARD', 'DISTINCT', 'DISTINCTROW', 'DO', 'DROP', 'DUAL', 'DUMPFILE', 'DUPLICATE', 'ELSE',
  'END', 'ESCAPE', 'EXCEPT', 'EXECUTE', 'EXISTS', 'EXPLAIN', 'FALSE', 'FETCH', 'FIRST', 'FLUSH', 'FOR', 'FOREIGN', 'FROM',
  'FULL', 'FUNCTION', 'GLOBAL', 'GRANT', 'GROUP', 'HANDLER', 'HAVING', 'HIGH_PRIORITY', 'HOLD', 'IF', 'IGNORE', 'ILIKE',
  'IMPORT', 'IN', 'INDEX', 'INNER', 'INSERT', 'INSTALL', 'INTERSECT', 'INTERVAL', 'INTO', 'IS', 'ISOLATION', 'JOIN', 'KEY',
  'KILL', 'LAST', 'LATERAL', 'LEFT', 'LEVEL', 'LIKE', 'LIMIT', 'LISTEN', 'LOAD', 'LOCAL', 'LOCALTIME', 'LOCALTIMESTAMP',
  'LOCK', 'LOCKED', 'LOW_PRIORITY', 'MATERIALIZED', 'MERGE', 'MODE', 'MOVE', 'NAMES', 'NATURAL', 'NO', 'NOT', 'NOTIFY',
  'NOWAIT', 'NULL', 'NULLS', 'OF', 'OFFSET', 'ON', 'ONLY', 'OPTIMIZE', 'OR', 'ORDER', 'OUTER', 'OUTFILE', 'OVER',
  'PARTITION', 'PERSIST', 'PERSIST_ONLY', 'PREPARE', 'PRIMARY', 'PROCEDURE', 'QUICK', 'READ', 'REASSIGN', 'RECURSIVE',
  'REFERENCES', 'REFRESH', 'REGEXP', 'REINDEX', 'RELEASE', 'RENAME', 'REPAIR', 'REPLACE', 'RESET', 'RETURNING', 'REVOKE',
  'RIGHT', 'RLIKE', 'ROLE', 'ROLLBACK', 'SAVEPOINT', 'SCHEMA', 'SECURITY', 'SELECT', 'SEQUENCE', 'SESSION',
  'SESSION_USER', 'SET', 'SHARE', 'SHOW', 'SIMILAR', 'SKIP', 'SNAPSHOT', 'SOME', 'SQL_BIG_RESULT', 'SQL_BUFFER_RESULT',
  'SQL_CACHE', 'SQL_CALC_FOUND_ROWS', 'SQL_NO_CACHE', 'SQL_SMALL_RESULT', 'START', 'STRAIGHT_JOIN', 'TABLE', 'TABLES',
  'TEMP', 'TEMPORARY', 'THEN', 'TIME', 'TIMESTAMP', 'TO', 'TRANSACTION', 'TRIGGER', 'TRUE', 'TRUNCATE', 'UNION', 'UNIQUE',
  'UNKNOWN', 'UNLISTEN', 'UNLOCK', 'UPDATE', 'USE', 'USING', 'VACUUM', 'VALUE', 'VALUES', 'VIEW', 'WHEN', 'WHERE',
  'WINDOW', 'WITH', 'WORK', 'WRITE', 'XA', 'ZONE',
] as const;

export type KeywordName = (typeof KEYWORD_LIST)[number];

/** Keyword ids by name: `Kw.SELECT`. */
export const Kw = Object.freeze(
  Object.fromEntries(KEYWORD_LIST.map((name, i) => [name, i + 1])) as { readonly [K in KeywordName]: number },
);

/**
 * Keywords after which an expression starts, so `-5` there is a signed literal. After any other
 * keyword (NULL, END, or a non-reserved word used as a column name, like `value`) `-` subtracts.
 */
const EXPRESSION_PREFIX_KEYWORDS: readonly KeywordName[] = [
  'SELECT', 'WHERE', 'AND', 'OR', 'NOT', 'WHEN', 'THEN', 'ELSE', 'ON', 'SET', 'BY', 'HAVING', 'LIMIT', 'OFFSET', 'IN',
  'IS', 'LIKE', 'ILIKE', 'BETWEEN', 'RETURNING', 'CASE', 'DISTINCT', 'ALL', 'ANY', 'SOME', 'INTERVAL', 'DEFAULT',
  'ESCAPE', 'REGEXP', 'RLIKE', 'SIMILAR', 'TO', 'DO', 'FETCH', 'MOVE', 'UNION', 'INTERSECT', 'EXCEPT', 'EXISTS',
  'AS', 'FROM', 'INTO', 'CALL', 'EXECUTE',
];

const KEYWORD_COUNT = KEYWORD_LIST.length;
const TABLE_BITS = 11;
const TABLE_MASK = (1 << TABLE_BITS) - 1;
const MAX_KEYWORD_LENGTH = Math.max(...KEYWORD_LIST.map((k) => k.length));
const table = new Uint16Array(1 << TABLE_BITS);
const expressionPrefix = new Uint8Array(KEYWORD_COUNT + 1);

/** Seed of the keyword hash: FNV-1a 32 over the word with ASCII letters upper-cased. */
export const KEYWORD_HASH_SEED = 0x811c9dc5;

/** FNV-1a 32 of the upper-cased ASCII letters of text[start, end). */
export function hashUpper(text: string, start: number, end: number, seed = KEYWORD_HASH_SEED): number {
  let h = seed;
  for (let i = start; i < end; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) c -= 0x20;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

for (let id = 1; id <= KEYWORD_COUNT; id++) {
  const name = KEYWORD_LIST[id - 1];
  let slot = hashUpper(name, 0, name.length) & TABLE_MASK;
  while (table[slot] !== 0) slot = (slot + 1) & TABLE_MASK;
  table[slot] = id;
}
for (const name of EXPRESSION_PREFIX_KEYWORDS) expressionPrefix[Kw[name]] = 1;

/** The keyword id of text[start, end) compared case-insensitively, or 0. */
export function keywordId(text: string, start: number, end: number): number {
  return keywordIdForHash(hashUpper(text, start, end), text, start, end);
}

/** keywordId() when the caller already computed hashUpper(text, start, end). */
export function keywordIdForHash(hash: number, text: string, start: number, end: number): number {
  const length = end - start;
  if (length > MAX_KEYWORD_LENGTH || length < 2) return 0;
  let slot = (hash >>> 0) & TABLE_MASK;
  for (;;) {
    const id = table[slot];
    if (id === 0) return 0;
    const name = KEYWORD_LIST[id - 1];
    if (name.length === length && sameUpper(text, start, name)) return id;
    slot = (slot + 1) & TABLE_MASK;
  }
}

function sameUpper(text: string, start: number, upper: string): boolean {
  for (let i = 0; i < upper.length; i++) {
    let c = text.charCodeAt(start + i);
    if (c >= 0x61 && c <= 0x7a) c -= 0x20;
    if (c !== upper.charCodeAt(i)) return false;
  }
  return true;
}

/** The upper-case spelling of a keyword id. */
export function keywordText(id: number): KeywordName {
  return KEYWORD_LIST[id - 1];
}

/** True when an expression may start right after the keyword (SELECT, WHERE, =-like keywords...). */
export function isExpressionPrefix(id: number): boolean {
  return expressionPrefix[id] === 1;
}
