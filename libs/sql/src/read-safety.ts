// Token-level checks that keep a statement off replicas: locking clauses, functions, variables, INTO, writable CTEs.
import type { UnsafeReason } from './classification';
import { functionNamePart, isStateSystemVariable, judgeFunction } from './functions';
import { Kw } from './keywords';
import { identifierName, TokenCursor, type NToken } from './normalized';
import { Tok, type Dialect } from './tokenizer';

/** What the scan found in one statement. */
export interface SafetyFacts {
  readonly unsafe: UnsafeReason[];
  /** Set when something in the statement must pin the session (GET_LOCK, INTO @var, @x := ...). */
  pinReason: string | undefined;
  /** A locking clause (FOR UPDATE, LOCK IN SHARE MODE...) appears anywhere. */
  locking: boolean;
  /** Token ranges [from, to) of top-level trailing locking clauses, which node-sql-parser may not accept. */
  readonly strip: [number, number][];
  /** PostgreSQL `SELECT ... INTO table` creates a table. */
  createsTable: boolean;
  /** A CTE body writes (INSERT/UPDATE/DELETE/MERGE inside WITH). */
  writableCte: boolean;
}

const add = (facts: SafetyFacts, code: UnsafeReason['code'], detail: string): void => {
  if (!facts.unsafe.some((r) => r.code === code && r.detail === detail)) facts.unsafe.push({ code, detail });
};

/** Scans one statement; `query` when its main verb is SELECT/VALUES/TABLE, `isWith` when it starts with WITH. */
export function scanSafety(c: TokenCursor, dialect: Dialect, allowed: ReadonlySet<string>, query: boolean, isWith: boolean): SafetyFacts {
  const facts: SafetyFacts = { unsafe: [], pinReason: undefined, locking: false, strip: [], createsTable: false, writableCte: false };
  for (let i = 0; i < c.length; i++) {
    const t = c.tokens[i];
    if (t.kind === Tok.Word) {
      if (t.keyword === Kw.FOR && c.kw(i - 1) === Kw.VALUE && (c.word(i - 2) === 'NEXT' || c.word(i - 2) === 'PREVIOUS')) {
        add(facts, 'sequence_function', `${c.word(i - 2)} VALUE FOR`); // MariaDB's NEXTVAL() / LASTVAL()
      } else if (t.keyword === Kw.FOR || t.keyword === Kw.LOCK) i = lockingClause(c, i, facts);
      else if (t.keyword === Kw.SQL_CALC_FOUND_ROWS) {
        add(facts, 'state_function', 'SQL_CALC_FOUND_ROWS');
        facts.pinReason ??= 'SQL_CALC_FOUND_ROWS is read back by FOUND_ROWS() on the same connection';
      }
      else if (t.keyword === Kw.INTO && query) intoClause(c, i, dialect, facts);
      else if (isWith && t.depth > 0 && writesInCte(c, i)) facts.writableCte = true;
      else if (c.at(i + 1)?.kind === Tok.LParen) functionCall(c, i, dialect, allowed, facts);
    } else if (t.kind === Tok.QuotedIdent && c.at(i + 1)?.kind === Tok.LParen) functionCall(c, i, dialect, allowed, facts);
    else if (t.kind === Tok.Variable) variable(c, i, facts);
  }
  return facts;
}

/** FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE [OF ...] [NOWAIT | SKIP LOCKED]; LOCK IN SHARE MODE. */
function lockingClause(c: TokenCursor, i: number, facts: SafetyFacts): number {
  let j = i + 1;
  if (c.kw(i) === Kw.LOCK) {
    if (!c.isSeq(j, Kw.IN, Kw.SHARE, Kw.MODE)) return i;
    j += 3;
  } else if (c.kw(j) === Kw.UPDATE || c.kw(j) === Kw.SHARE) j += 1;
  else if (c.isSeq(j, Kw.NO, Kw.KEY, Kw.UPDATE)) j += 3;
  else if (c.isSeq(j, Kw.KEY, Kw.SHARE)) j += 2;
  else return i;
  if (c.kw(j) === Kw.OF) {
    j++;
    while (j < c.length && (c.tokens[j].kind === Tok.Word || c.tokens[j].kind === Tok.QuotedIdent || c.tokens[j].kind === Tok.Dot || c.tokens[j].kind === Tok.Comma) && c.kw(j) !== Kw.NOWAIT && c.kw(j) !== Kw.SKIP && c.kw(j) !== Kw.FOR) j++;
  }
  if (c.kw(j) === Kw.NOWAIT) j++;
  else if (c.isSeq(j, Kw.SKIP, Kw.LOCKED)) j += 2;
  facts.locking = true;
  add(facts, 'locking_read', c.tokens.slice(i, j).map((t) => t.text).join(' '));
  const last = facts.strip[facts.strip.length - 1];
  if (c.tokens[i].depth === 0 && (j >= c.length || c.kw(j) === Kw.FOR)) {
    if (last !== undefined && last[1] === i) last[1] = j;
    else facts.strip.push([i, j]);
  }
  return j - 1;
}

/** SELECT ... INTO @var / OUTFILE / DUMPFILE (MySQL), SELECT ... INTO table (PostgreSQL). */
function intoClause(c: TokenCursor, i: number, dialect: Dialect, facts: SafetyFacts): void {
  const next = c.at(i + 1);
  if (next?.kind === Tok.Variable) {
    add(facts, 'select_into', 'SELECT ... INTO a user variable');
    facts.pinReason ??= 'SELECT ... INTO assigns user variables';
  } else if (c.word(i + 1) === 'OUTFILE' || c.word(i + 1) === 'DUMPFILE') {
    add(facts, 'select_into', `SELECT ... INTO ${c.word(i + 1)}`);
    if (c.tokens[i].depth === 0) {
      let end = i + 1;
      while (end < c.length && c.kw(end) !== Kw.FOR) end++;
      facts.strip.push([i, end]); // node-sql-parser does not read INTO OUTFILE; the analysis needs the rest
    }
  } else {
    add(facts, 'select_into', dialect === 'postgresql' ? 'SELECT ... INTO creates a table' : 'SELECT ... INTO assigns variables');
    if (dialect === 'postgresql') {
      facts.createsTable = true;
      // SELECT ... INTO [GLOBAL | LOCAL] TEMP[ORARY] [TABLE] t, or INTO pg_temp.t: a table only this session sees
      let j = i + 1;
      if (c.kw(j) === Kw.GLOBAL || c.kw(j) === Kw.LOCAL) j++;
      if (c.kw(j) === Kw.TEMPORARY || c.kw(j) === Kw.TEMP || inTempSchema(c, j)) facts.pinReason ??= 'temporary table';
    }
  }
}

/** `pg_temp.name` (or `pg_temp_N.name`) at `j`: PostgreSQL's schema for the session's temporary objects. */
export function inTempSchema(c: TokenCursor, j: number): boolean {
  const t = c.at(j);
  if (t === undefined || (t.kind !== Tok.Word && t.kind !== Tok.QuotedIdent) || c.at(j + 1)?.kind !== Tok.Dot) return false;
  return /^pg_temp(_\d+)?$/.test(t.kind === Tok.Word ? identifierName(t).toLowerCase() : identifierName(t));
}

function writesInCte(c: TokenCursor, i: number): boolean {
  const kw = c.kw(i);
  if (kw === Kw.INSERT || kw === Kw.DELETE || kw === Kw.MERGE) return c.at(i - 1)?.kind === Tok.LParen;
  if (kw === Kw.UPDATE) return c.at(i - 1)?.kind === Tok.LParen;
  return false;
}

/** The canonical name of a word or quoted identifier (quoted routine names are calls too: jOOQ and some ORMs quote them). */
const nameOf = (t: NToken, dialect: Dialect): string => functionNamePart(dialect, identifierName(t), t.kind === Tok.QuotedIdent);

/**
 * A word or quoted identifier followed by `(`: a function call unless it names a type, an alias
 * column list or an insert target. Quoted and unquoted names are judged alike, by their canonical name.
 */
function functionCall(c: TokenCursor, i: number, dialect: Dialect, allowed: ReadonlySet<string>, facts: SafetyFacts): void {
  const t = c.tokens[i];
  if (t.keyword !== 0) return; // unquoted keyword functions (IF, LEFT, REPLACE, CAST, EXISTS, VALUES...) are built-ins
  const prev = c.at(i - 1);
  const prevKw = c.kw(i - 1);
  if (prevKw === Kw.AS || prevKw === Kw.INTO || prevKw === Kw.TABLE || prevKw === Kw.WITH || prevKw === Kw.RECURSIVE) return;
  if (prev?.kind === Tok.Operator && prev.text === '::') return; // a type
  if (prev?.kind === Tok.RParen) return; // `(subquery) alias(cols)`
  const close = c.closing(i + 1);
  const afterAs = c.kw(close + 1) === Kw.AS ? close + 2 : -1;
  if (afterAs > 0 && (c.at(afterAs)?.kind === Tok.LParen || c.kw(afterAs) === Kw.NOT || c.kw(afterAs) === Kw.MATERIALIZED)) return; // CTE name(cols) AS (...)
  let schema: string | undefined;
  if (prev?.kind === Tok.Dot) {
    const owner = c.at(i - 2);
    if (owner === undefined || (owner.kind !== Tok.Word && owner.kind !== Tok.QuotedIdent)) return;
    schema = nameOf(owner, dialect);
  }
  const bare = nameOf(t, dialect);
  const verdict = judgeFunction(dialect, schema, bare, allowed);
  if (verdict.safe) return;
  const name = schema === undefined ? bare : `${schema}.${bare}`;
  add(facts, verdict.code, `${name}()`);
  if (verdict.pins) facts.pinReason ??= `${name}() holds state on the connection`;
}

function variable(c: TokenCursor, i: number, facts: SafetyFacts): void {
  const text = c.tokens[i].text;
  if (text.startsWith('@@')) {
    if (isStateSystemVariable(text)) add(facts, 'session_variable', text);
    return;
  }
  add(facts, 'user_variable', text);
  const next = c.at(i + 1);
  if (next?.kind === Tok.Operator && next.text === ':=') facts.pinReason ??= `assigns user variable ${text}`;
}
