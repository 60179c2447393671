// Tables named by a statement, read from tokens alone: used when node-sql-parser cannot parse it.
import type { TableRef } from './classification';
import { Kw } from './keywords';
import { identifierName, TokenCursor } from './normalized';
import { Tok } from './tokenizer';

const isName = (c: TokenCursor, i: number): boolean => {
  const t = c.at(i);
  return t !== undefined && (t.kind === Tok.QuotedIdent || (t.kind === Tok.Word && t.keyword === 0));
};

/** Reads `name` or `schema.name` at i; returns the ref and the index after it. */
function qualifiedName(c: TokenCursor, i: number): { schema?: string; name: string; next: number } | undefined {
  if (!isName(c, i)) return undefined;
  const first = identifierName(c.tokens[i]);
  if (c.at(i + 1)?.kind === Tok.Dot && isName(c, i + 2)) {
    if (c.at(i + 3)?.kind === Tok.Dot) return undefined; // a.b.c is a column, not a table
    return { schema: first, name: identifierName(c.tokens[i + 2]), next: i + 3 };
  }
  return { name: first, next: i + 1 };
}

/** Names declared by WITH [RECURSIVE] name [(cols)] AS (...), which are not tables. */
export function cteNames(c: TokenCursor): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i < c.length; i++) {
    const kw = c.kw(i);
    if (kw !== Kw.WITH && !(c.at(i)?.kind === Tok.Comma && names.size > 0)) continue;
    let j = kw === Kw.RECURSIVE || c.kw(i + 1) === Kw.RECURSIVE ? i + 2 : i + 1;
    if (!isName(c, j)) continue;
    const name = identifierName(c.tokens[j]);
    j++;
    if (c.at(j)?.kind === Tok.LParen) j = c.closing(j) + 1;
    if (c.kw(j) === Kw.AS) names.add(name.toLowerCase());
  }
  return names;
}

const TABLE_KEYWORDS = new Set([Kw.FROM, Kw.JOIN, Kw.INTO, Kw.UPDATE, Kw.TABLE, Kw.USING, Kw.TABLES, Kw.TRUNCATE]);

/** Guesses the tables a statement touches; targets of writes (every table named by DDL) are marked `write`. */
export function guessTables(c: TokenCursor, writeStatement: boolean, ddl: boolean): TableRef[] {
  const ctes = cteNames(c);
  const seen = new Map<string, TableRef>();
  const note = (schema: string | undefined, name: string, access: 'read' | 'write'): void => {
    if (schema === undefined && ctes.has(name.toLowerCase())) return;
    if (name.toUpperCase() === 'DUAL') return;
    const key = `${schema ?? ''}.${name}`;
    const existing = seen.get(key);
    if (existing === undefined || (existing.access === 'read' && access === 'write')) {
      seen.set(key, schema === undefined ? { name, access } : { schema, name, access });
    }
  };
  const opener = enclosingParens(c);
  for (let i = 0; i < c.length; i++) {
    const kw = c.kw(i);
    if (!TABLE_KEYWORDS.has(kw)) continue;
    if (kw === Kw.UPDATE && (c.kw(i - 1) === Kw.FOR || c.kw(i - 1) === Kw.KEY || c.kw(i - 1) === Kw.DO || c.kw(i - 1) === Kw.DUPLICATE)) continue;
    if (kw === Kw.FROM && opener[i] >= 0 && !startsQuery(c, opener[i] + 1)) continue; // EXTRACT(x FROM y), TRIM(... FROM ...)
    let j = i + 1;
    while (c.kw(j) === Kw.ONLY || c.kw(j) === Kw.LATERAL || c.kw(j) === Kw.IF || c.kw(j) === Kw.NOT || c.kw(j) === Kw.EXISTS || c.kw(j) === Kw.IGNORE || c.kw(j) === Kw.LOW_PRIORITY || c.kw(j) === Kw.TABLE) j++;
    const deleteTarget = kw === Kw.FROM && [Kw.DELETE, Kw.LOW_PRIORITY, Kw.QUICK, Kw.IGNORE].includes(c.kw(i - 1));
    const target = kw === Kw.INTO || kw === Kw.UPDATE || kw === Kw.TRUNCATE || deleteTarget;
    const access = ddl || (writeStatement && target) ? 'write' : 'read';
    for (;;) {
      const ref = qualifiedName(c, j);
      if (ref === undefined || (c.at(ref.next)?.kind === Tok.LParen && kw !== Kw.INTO && kw !== Kw.TABLE)) break;
      note(ref.schema, ref.name, access);
      j = ref.next;
      if (c.kw(j) === Kw.AS) j++;
      if (isName(c, j)) j++; // alias
      while (c.kw(j) === Kw.READ || c.kw(j) === Kw.WRITE || c.kw(j) === Kw.LOCAL || c.kw(j) === Kw.LOW_PRIORITY) j++; // LOCK TABLES t READ
      if (c.at(j)?.kind !== Tok.Comma || (kw !== Kw.FROM && kw !== Kw.TABLES && kw !== Kw.TABLE && kw !== Kw.USING)) break;
      j++;
    }
  }
  return [...seen.values()];
}

/** For each token, the index of the `(` that encloses it, or -1 at top level. */
function enclosingParens(c: TokenCursor): Int32Array {
  const opener = new Int32Array(c.length);
  const stack: number[] = [];
  for (let i = 0; i < c.length; i++) {
    const kind = c.tokens[i].kind;
    if (kind === Tok.RParen) stack.pop();
    opener[i] = stack.length > 0 ? stack[stack.length - 1] : -1;
    if (kind === Tok.LParen) stack.push(i);
  }
  return opener;
}

function startsQuery(c: TokenCursor, i: number): boolean {
  const kw = c.kw(i);
  return kw === Kw.SELECT || kw === Kw.WITH || kw === Kw.VALUES || kw === Kw.TABLE || kw === Kw.DELETE || kw === Kw.INSERT || kw === Kw.UPDATE || c.at(i)?.kind === Tok.LParen;
}

/** Every identifier in the statement (last part of qualified names), lower case: a conservative superset of tables. */
export function identifierNames(c: TokenCursor): Set<string> {
  const names = new Set<string>();
  for (const t of c.tokens) {
    if (t.kind === Tok.QuotedIdent || t.kind === Tok.Word) names.add(identifierName(t).toLowerCase());
  }
  return names;
}
