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

/**
 * A select list made only of (qualified) column names, aliases and `*` tells the analysis
 * nothing, and is the slowest part for node-sql-parser: returns the token range to replace by `*`.
 */
function plainSelectList(tokens: readonly NToken[], select: number): [number, number] | undefined {
  let i = select + 1;
  while (i < tokens.length && tokens[i].kind === Tok.Word && SELECT_MODIFIERS.has(tokens[i].keyword)) i++;
  const from = i;
  const depth = tokens[select].depth;
  for (; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.depth !== depth) return undefined;
    if (t.kind === Tok.Word && t.keyword === Kw.FROM) return i - from >= 4 ? [from, i] : undefined;
    const plain =
      t.kind === Tok.QuotedIdent ||
      t.kind === Tok.Dot ||
      t.kind === Tok.Comma ||
      (t.kind === Tok.Word && (t.keyword === 0 || t.keyword === Kw.AS)) ||
      (t.kind === Tok.Operator && t.text === '*');
    if (!plain) return undefined;
  }
  return undefined;
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

/** The probe text for one statement's tokens, leaving out `skip` ranges (trailing locking clauses). */
export function buildProbe(text: string, tokens: readonly NToken[], dialect: Dialect, skip: readonly [number, number][]): string {
  const replace = new Map<number, [number, string]>(); // token index -> [end index, replacement]
  for (const [from, to] of skip) replace.set(from, [to, '']);
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].kind === Tok.Word && tokens[i].keyword === Kw.SELECT) {
      const list = plainSelectList(tokens, i);
      if (list !== undefined) replace.set(list[0], [list[1], '*']);
    }
  }
  let out = '';
  let prevEnd = tokens.length > 0 ? tokens[0].start : 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const cut = replace.get(i);
    out += text.slice(prevEnd, t.start);
    if (cut !== undefined) {
      out += cut[1];
      i = cut[0] - 1;
      prevEnd = cut[0] < tokens.length ? tokens[cut[0] - 1].end : text.length;
      continue;
    }
    if (isIntroducer(tokens, i)) {
      prevEnd = t.end;
      continue; // _utf8mb4'x': node-sql-parser does not read charset introducers
    }
    out += t.kind === NormTok.Slot || t.kind === NormTok.SlotList ? markerFor(tokens, i, dialect) : isDefaultCell(tokens, i) ? 'NULL' : t.text;
    prevEnd = t.end;
  }
  return out.trim();
}
