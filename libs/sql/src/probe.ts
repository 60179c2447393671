// Builds the text node-sql-parser parses on a miss: slots become numbered markers, and parts the analysis does not need are left out.
import { Kw } from './keywords';
import { NormTok } from './fingerprint';
import type { NToken } from './normalized';
import { Tok, type Dialect } from './tokenizer';

/** A string marker's text: `'dbp:<slot>'`. Number markers are `<slot + 1>`. */
export const STRING_MARKER = /^dbp:(\d+)$/;

/** Keywords before which a literal must be a string for node-sql-parser to accept it. */
const STRING_CONTEXT = new Set([Kw.DATE, Kw.TIME, Kw.TIMESTAMP, Kw.LIKE, Kw.ILIKE, Kw.ESCAPE, Kw.REGEXP, Kw.RLIKE, Kw.COLLATE]);

/** Select-list modifiers that may sit between SELECT and the list. */
const SELECT_MODIFIERS = new Set([
  Kw.DISTINCT, Kw.ALL, Kw.DISTINCTROW, Kw.HIGH_PRIORITY, Kw.STRAIGHT_JOIN, Kw.SQL_SMALL_RESULT, Kw.SQL_BIG_RESULT,
  Kw.SQL_BUFFER_RESULT, Kw.SQL_CACHE, Kw.SQL_NO_CACHE, Kw.SQL_CALC_FOUND_ROWS,
]);

function markerFor(tokens: readonly NToken[], i: number, dialect: Dialect): string {
  const slot = tokens[i].slot;
  const prev = tokens[i - 1];
  const wantsString =
    prev !== undefined &&
    prev.kind === Tok.Word &&
    (STRING_CONTEXT.has(prev.keyword) || prev.keyword === 0 || (prev.keyword === Kw.INTERVAL && dialect === 'postgresql'));
  return wantsString ? `'dbp:${slot}'` : String(slot + 1);
}

const QUERY_STARTS = new Set([Kw.SELECT, Kw.WITH, Kw.VALUES]);
const AFTER_LIST = [Kw.FROM, Kw.INTO, Kw.WHERE, Kw.GROUP, Kw.HAVING, Kw.ORDER, Kw.LIMIT, Kw.UNION, Kw.INTERSECT, Kw.EXCEPT, Kw.FOR, Kw.LOCK, Kw.WINDOW, Kw.OFFSET, Kw.FETCH];
const AFTER_ORDERING = [Kw.HAVING, Kw.ORDER, Kw.LIMIT, Kw.OFFSET, Kw.FOR, Kw.FETCH, Kw.UNION, Kw.INTERSECT, Kw.EXCEPT, Kw.WINDOW, Kw.LOCK, Kw.INTO, Kw.RETURNING];
const AFTER_WHERE = [Kw.GROUP, ...AFTER_ORDERING];
const AFTER_ON = [Kw.JOIN, Kw.LEFT, Kw.RIGHT, Kw.INNER, Kw.CROSS, Kw.FULL, Kw.NATURAL, Kw.STRAIGHT_JOIN, Kw.WHERE, Kw.USING, ...AFTER_WHERE];

/**
 * The clause from `from` to the first same-depth token that is one of `stops` (or a comma when
 * `comma`), or to where its group closes. Undefined when it holds a sub-query: that must be parsed.
 */
function clause(tokens: readonly NToken[], from: number, depth: number, stops: ReadonlySet<number>, comma: boolean): [number, number] | undefined {
  for (let i = from; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.depth < depth) return [from, i]; // a `)` has the depth outside its group
    const isWord = t.kind === Tok.Word;
    if (isWord && QUERY_STARTS.has(t.keyword)) return undefined;
    if (t.depth === depth && ((isWord && stops.has(t.keyword)) || (comma && t.kind === Tok.Comma))) return [from, i];
  }
  return [from, tokens.length];
}

const LIST_STOPS = new Set(AFTER_LIST);
const ORDERING_STOPS = new Set(AFTER_ORDERING);
const WHERE_STOPS = new Set(AFTER_WHERE);
const ON_STOPS = new Set(AFTER_ON);

/**
 * Parts node-sql-parser is slow on and the analysis does not need from it (the token scan has
 * read their functions, variables and INTO already): select lists become `1` (one column keeps
 * scalar sub-queries valid), ORDER BY / GROUP BY go, and when the statement names no sharded
 * table (`keyFree`) WHERE, ON and HAVING conditions become `1 = 1`. Never a part with a sub-query.
 */
function reductions(tokens: readonly NToken[], keyFree: boolean, replace: Map<number, [number, string]>): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== Tok.Word || replace.has(i)) continue;
    let range: [number, number] | undefined;
    let text = '';
    if (t.keyword === Kw.SELECT) {
      let from = i + 1;
      while (from < tokens.length && tokens[from].kind === Tok.Word && SELECT_MODIFIERS.has(tokens[from].keyword)) from++;
      range = clause(tokens, from, t.depth, LIST_STOPS, false);
      text = '1';
      if (range !== undefined && range[1] - range[0] < 2) range = undefined;
    } else if ((t.keyword === Kw.ORDER || t.keyword === Kw.GROUP) && tokens[i + 1]?.keyword === Kw.BY) {
      range = clause(tokens, i + 2, t.depth, ORDERING_STOPS, false);
      if (range !== undefined) range = [i, range[1]];
    } else if (keyFree && (t.keyword === Kw.WHERE || t.keyword === Kw.HAVING || (t.keyword === Kw.ON && tokens[i - 1]?.keyword !== Kw.DISTINCT))) {
      range = clause(tokens, i + 1, t.depth, t.keyword === Kw.ON ? ON_STOPS : WHERE_STOPS, t.keyword === Kw.ON);
      text = '1 = 1';
    }
    if (range === undefined || range[1] <= range[0]) continue;
    replace.set(range[0], [range[1], text]);
    i = Math.max(i, range[1] - 1);
  }
}

function isIntroducer(tokens: readonly NToken[], i: number): boolean {
  const t = tokens[i];
  return t.kind === Tok.Word && t.keyword === 0 && t.text.charCodeAt(0) === 0x5f && tokens[i + 1]?.kind === NormTok.Slot;
}

/** `DEFAULT` as a VALUES cell, which node-sql-parser's MySQL grammar rejects; NULL analyzes the same (not a key). */
function isDefaultCell(tokens: readonly NToken[], i: number): boolean {
  if (tokens[i].keyword !== Kw.DEFAULT || tokens[i].kind !== Tok.Word) return false;
  const prev = tokens[i - 1]?.kind;
  const next = tokens[i + 1]?.kind;
  return (prev === Tok.LParen || prev === Tok.Comma) && (next === Tok.Comma || next === Tok.RParen);
}

/** The probe: its text, and its size in tokens, the measure of node-sql-parser's work. */
export interface Probe {
  readonly text: string;
  /** Tokens kept, a token inside nested grouping parentheses counting extra (`tokenWeight`), plus `SUBQUERY_WEIGHT` per sub-query. */
  readonly tokens: number;
}

/** Keywords after which `(` opens a grouping of an expression (not a call, a list or a sub-query). */
const GROUPS_AFTER = new Set([Kw.AND, Kw.OR, Kw.NOT, Kw.WHERE, Kw.ON, Kw.HAVING, Kw.WHEN, Kw.THEN, Kw.ELSE, Kw.CASE, Kw.SELECT, Kw.IS, Kw.BETWEEN]);

function opensQuery(tokens: readonly NToken[], i: number): boolean {
  const next = tokens[i + 1];
  return next !== undefined && next.kind === Tok.Word && QUERY_STARTS.has(next.keyword);
}

/** True when the `(` at i groups an expression: after an operator, a comma, another `(` or a condition keyword. */
function opensGroup(tokens: readonly NToken[], i: number): boolean {
  if (opensQuery(tokens, i)) return false;
  const prev = tokens[i - 1];
  if (prev === undefined) return true;
  if (prev.kind === Tok.QuotedIdent) return false; // a call
  return prev.kind !== Tok.Word || GROUPS_AFTER.has(prev.keyword);
}

/**
 * What one token inside `depth` grouping parentheses counts. node-sql-parser backtracks on nested
 * groups (its PostgreSQL grammar about doubles its work per level from the third: 12 nested
 * `(... OR ...)` take 100 ms), so from depth 3 each level counts 4 times the one outside it.
 */
function tokenWeight(depth: number): number {
  return depth <= 2 ? 1 : 4 ** Math.min(depth - 2, 24);
}

/** What opening a sub-query adds: node-sql-parser spends on each about what it spends on 60-70 flat tokens. */
const SUBQUERY_WEIGHT = 24;

/**
 * The probe text for one statement's tokens, leaving out `skip` ranges (trailing locking
 * clauses) and the reductions above.
 */
export function buildProbe(text: string, tokens: readonly NToken[], dialect: Dialect, skip: readonly [number, number][], keyFree: boolean): Probe {
  const replace = new Map<number, [number, string]>(); // token index -> [end index, replacement]
  for (const [from, to] of skip) replace.set(from, [to, '']);
  reductions(tokens, keyFree, replace);
  let out = '';
  let size = 0;
  const groups: boolean[] = []; // per open `(` kept: whether it groups an expression
  let depth = 0;
  let prevEnd = tokens.length > 0 ? tokens[0].start : 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const cut = replace.get(i);
    out += text.slice(prevEnd, t.start);
    if (cut !== undefined) {
      out += cut[1];
      if (cut[1] !== '') size += tokenWeight(depth);
      i = cut[0] - 1;
      prevEnd = cut[0] < tokens.length ? tokens[cut[0] - 1].end : text.length;
      continue;
    }
    if (isIntroducer(tokens, i)) {
      prevEnd = t.end;
      continue; // _utf8mb4'x': node-sql-parser does not read charset introducers
    }
    out += t.kind === NormTok.Slot || t.kind === NormTok.SlotList ? markerFor(tokens, i, dialect) : isDefaultCell(tokens, i) ? 'NULL' : t.text;
    if (t.kind === Tok.RParen && groups.pop() === true) depth--;
    size += tokenWeight(depth);
    if (t.kind === Tok.LParen) {
      if (opensQuery(tokens, i)) size += SUBQUERY_WEIGHT;
      const group = opensGroup(tokens, i);
      groups.push(group);
      if (group) depth++;
    }
    prevEnd = t.end;
  }
  return { text: out.trim(), tokens: size };
}
