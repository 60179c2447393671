// MySQL/MariaDB compound statements: a stored program body (BEGIN ... END, IF ... END IF, loops) is one statement, `;`s and all.
import { Tok } from './tokenizer';
import type { NToken } from './normalized';

const word = (t: NToken | undefined): string => (t !== undefined && t.kind === Tok.Word ? t.text.toUpperCase() : '');

/** Objects whose CREATE / ALTER carries a stored program body. */
const PROGRAM_OBJECTS = new Set(['PROCEDURE', 'FUNCTION', 'TRIGGER', 'EVENT']);
/** Objects whose CREATE / ALTER never does: the head scan stops there. */
const PLAIN_OBJECTS = new Set(['TABLE', 'VIEW', 'INDEX', 'DATABASE', 'SCHEMA', 'USER', 'ROLE', 'SEQUENCE', 'SERVER', 'TABLESPACE', 'PACKAGE']);
/** Words that start a block of a stored program at statement level (each one ends with one END). */
const LOOPS = new Set(['LOOP', 'WHILE', 'REPEAT']);
/** Tokens after which a stored program statement starts: an IF there is an IF statement, not `IF EXISTS`. */
const STATEMENT_START = new Set([
  'BEGIN', 'THEN', 'ELSE', 'DO', 'LOOP', 'REPEAT', 'ROW', 'ATOMIC', 'DETERMINISTIC', 'SQL', 'DATA', 'DEFINER', 'INVOKER',
]);

/** How far the head of CREATE [OR REPLACE] [DEFINER = ...] [AGGREGATE] PROCEDURE ... is searched for the object word. */
const HEAD_TOKENS = 16;

/**
 * Whether the statement starting with `tokens` may hold a compound body: CREATE / ALTER of a
 * procedure, function, trigger or event, MariaDB's `BEGIN NOT ATOMIC`, or a MariaDB compound
 * statement outside a stored program (IF, CASE, LOOP, WHILE, REPEAT, `label:`).
 */
export function isCompoundCapable(tokens: readonly NToken[]): boolean {
  const first = word(tokens[0]);
  if (first === 'BEGIN') return word(tokens[1]) === 'NOT' && word(tokens[2]) === 'ATOMIC';
  if (first === 'IF' || first === 'CASE' || LOOPS.has(first)) return true;
  if (tokens[1]?.kind === Tok.Operator && tokens[1].text === ':' && (tokens[0].kind === Tok.Word || tokens[0].kind === Tok.QuotedIdent)) return true;
  return first === 'CREATE' || first === 'ALTER' ? routineHead(tokens) : false;
}

/** Whether CREATE / ALTER names a procedure, function, trigger or event before any other object word. */
export function routineHead(tokens: readonly NToken[]): boolean {
  for (let i = 1; i < Math.min(tokens.length, HEAD_TOKENS); i++) {
    const w = word(tokens[i]);
    if (PROGRAM_OBJECTS.has(w)) return true;
    if (PLAIN_OBJECTS.has(w)) return false;
  }
  return false;
}

/**
 * The change in block depth at token `i` of `tokens` (the statement so far and what follows):
 * +1 where a BEGIN, CASE, IF, LOOP, WHILE or REPEAT block opens, -1 at END (`END IF`, `END LOOP`...
 * are one END: the word after it opens nothing). A CASE expression ends with END too; an IF()
 * or REPEAT() call, and `IF [NOT] EXISTS` inside a statement, open nothing.
 */
export function blockDelta(tokens: readonly NToken[], i: number): number {
  const w = word(tokens[i]);
  if (w === '') return 0;
  if (w === 'END') return -1;
  if (w === 'BEGIN') return 1;
  if (w !== 'CASE' && w !== 'IF' && !LOOPS.has(w)) return 0;
  if (word(tokens[i - 1]) === 'END') return 0;
  const next = tokens[i + 1];
  if (w === 'REPEAT' && next?.kind === Tok.LParen) return 0; // REPEAT('ab', 3)
  if (w === 'IF') return blockIf(tokens, i) ? 1 : 0;
  return 1;
}

function blockIf(tokens: readonly NToken[], i: number): boolean {
  const next = tokens[i + 1];
  if (next?.kind === Tok.LParen && hasTopLevelComma(tokens, i + 1)) return false; // IF(cond, a, b)
  const exists = word(next) === 'EXISTS' || (word(next) === 'NOT' && word(tokens[i + 2]) === 'EXISTS');
  return !exists || startsStatement(tokens[i - 1]);
}

function startsStatement(prev: NToken | undefined): boolean {
  if (prev === undefined) return true;
  if (prev.kind === Tok.Semicolon || prev.kind === Tok.RParen) return true;
  if (prev.kind === Tok.Operator && prev.text === ':') return true;
  return STATEMENT_START.has(word(prev));
}

function hasTopLevelComma(tokens: readonly NToken[], open: number): boolean {
  const depth = tokens[open].depth;
  for (let j = open + 1; j < tokens.length; j++) {
    const t = tokens[j];
    if (t.kind === Tok.RParen && t.depth === depth) return false;
    if (t.kind === Tok.Comma && t.depth === depth + 1) return true;
  }
  return false;
}
