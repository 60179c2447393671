// Token-level classification of one statement: family, command, transaction and session effects, safety facts.
import type { ReplayableSetting, SessionEffect, StatementFamily, TableRef, TransactionEffect, UnsafeReason } from './classification';
import { NO_SESSION_EFFECT } from './classification';
import { Kw } from './keywords';
import { NormTok } from './fingerprint';
import { TokenCursor } from './normalized';
import { inTempSchema, scanSafety } from './read-safety';
import { guessTables } from './table-guess';
import { Tok, type Dialect } from './tokenizer';
import { classifySet } from './set-statement';
import { isCompoundCapable, routineHead } from './compound';

/** What the tokens alone say about a statement. */
export interface LexicalAnalysis {
  family: StatementFamily;
  command: string;
  transaction: TransactionEffect;
  /** Slot whose value decides SET autocommit on/off at bind time, else -1. */
  autocommitSlot: number;
  session: SessionEffect;
  setting?: ReplayableSetting;
  unsafe: UnsafeReason[];
  locking: boolean;
  returning: boolean;
  /** Token ranges to leave out of the text handed to node-sql-parser. */
  strip: [number, number][];
  /** Queries, DML and DDL go to node-sql-parser; keyword-shaped statements do not need it. */
  parse: boolean;
  tables: TableRef[];
}

/** What the leading keywords decide; `reasons` come on top of the safety scan's. */
export type Shape = Pick<LexicalAnalysis, 'family' | 'command'> &
  Partial<Pick<LexicalAnalysis, 'transaction' | 'autocommitSlot' | 'session' | 'setting' | 'parse'>> & { reasons?: UnsafeReason[] };

const pin = (reason: string): SessionEffect => ({ kind: 'pin', reason });

const DDL_WORDS = new Set([
  Kw.ALTER, Kw.RENAME, Kw.GRANT, Kw.REVOKE, Kw.TRUNCATE, Kw.OPTIMIZE, Kw.REPAIR, Kw.COMMENT, Kw.VACUUM, Kw.REINDEX,
  Kw.CLUSTER, Kw.REFRESH, Kw.FLUSH, Kw.INSTALL, Kw.IMPORT, Kw.REASSIGN, Kw.SECURITY, Kw.CHECKPOINT,
]);
const PIN_WORDS = new Map<number, string>([
  [Kw.EXECUTE, 'SQL-level prepared statement'],
  [Kw.DEALLOCATE, 'SQL-level prepared statement'],
  [Kw.LISTEN, 'LISTEN subscription'],
  [Kw.UNLISTEN, 'LISTEN subscription'],
  [Kw.NOTIFY, 'notification'],
  [Kw.DECLARE, 'cursor'],
  [Kw.FETCH, 'cursor'],
  [Kw.MOVE, 'cursor'],
  [Kw.CLOSE, 'cursor'],
  [Kw.LOCK, 'table lock'],
  [Kw.UNLOCK, 'table lock'],
  [Kw.XA, 'XA transaction'],
  [Kw.HANDLER, 'HANDLER cursor'],
  [Kw.DISCARD, 'session reset'],
]);
const UTILITY_WORDS = new Set(['SHOW', 'KILL', 'HELP', 'CHECKSUM', 'GET']);

/** Classifies one statement from its normalized tokens. */
export function classifyLexically(c: TokenCursor, dialect: Dialect, allowed: ReadonlySet<string>): LexicalAnalysis {
  let i = 0;
  while (c.at(i)?.kind === Tok.LParen) i++;
  const shape = commandShape(c, i, dialect);
  const query = shape.family === 'read';
  // A stored program's body runs later, as its definer: what it calls says nothing about this statement.
  const routine = dialect === 'mysql' && shape.family === 'ddl' && (c.kw(i) === Kw.CREATE || c.kw(i) === Kw.ALTER) && routineHead(c.tokens.slice(i));
  if (routine) shape.parse = false; // node-sql-parser reads no stored program bodies
  const facts = scanSafety(routine ? new TokenCursor([]) : c, dialect, allowed, query, c.kw(i) === Kw.WITH);
  const { reasons, ...decided } = shape;
  const analysis: LexicalAnalysis = {
    transaction: 'none',
    autocommitSlot: -1,
    session: NO_SESSION_EFFECT,
    parse: false,
    ...decided,
    unsafe: [...(reasons ?? []), ...facts.unsafe],
    locking: facts.locking,
    returning: c.tokens.some((t) => t.keyword === Kw.RETURNING),
    strip: facts.strip,
    tables: [],
  };
  if (facts.writableCte && analysis.family === 'read') {
    analysis.family = 'write';
    analysis.unsafe.push({ code: 'writable_cte', detail: 'a WITH clause writes' });
  }
  if (facts.createsTable && analysis.family === 'read') analysis.family = 'ddl';
  if (facts.pinReason !== undefined && analysis.session.kind !== 'pin') analysis.session = pin(facts.pinReason);
  if (analysis.family !== 'read') analysis.unsafe.unshift({ code: 'not_a_read', detail: `${analysis.command} is ${analysis.family.replace('_', ' ')}` });
  if (dialect === 'mysql' && analysis.family === 'ddl' && analysis.transaction === 'none') analysis.transaction = 'implicit_commit';
  const ddl = analysis.family === 'ddl' || (analysis.family === 'session_state' && (c.kw(i) === Kw.CREATE || c.kw(i) === Kw.DROP));
  analysis.tables = guessTables(c, analysis.family === 'write' || ddl, ddl);
  return analysis;
}

function commandShape(c: TokenCursor, i: number, dialect: Dialect): Shape {
  const kw = c.kw(i);
  const command = c.word(i).toLowerCase() || (c.at(i)?.kind === NormTok.Slot ? 'literal' : 'unknown');
  switch (kw) {
    case Kw.SELECT:
    case Kw.VALUES:
    case Kw.TABLE:
      return { family: 'read', command, parse: true };
    case Kw.WITH:
      return withShape(c, i, dialect);
    case Kw.INSERT:
    case Kw.REPLACE:
    case Kw.UPDATE:
    case Kw.DELETE:
    case Kw.MERGE:
      return { family: 'write', command, parse: true };
    case Kw.CALL:
      return { family: 'write', command, reasons: [{ code: 'procedure_call', detail: 'stored procedures run on the primary' }] };
    case Kw.DO:
    case Kw.LOAD:
    case Kw.COPY:
      return { family: 'write', command };
    case Kw.CREATE:
      return createShape(c, i, command, dialect);
    case Kw.DROP:
      return c.kw(i + 1) === Kw.TEMPORARY ? { family: 'session_state', command, session: pin('temporary table') } : { family: 'ddl', command, parse: true };
    case Kw.ANALYZE:
    case Kw.EXPLAIN:
    case Kw.DESCRIBE:
    case Kw.DESC:
      return explainShape(c, i, dialect, command);
    default:
      return transactionShape(c, i, dialect, command) ?? otherShape(c, i, dialect, command);
  }
}

function withShape(c: TokenCursor, i: number, dialect: Dialect): Shape {
  // Skip the CTE definitions to the main verb: name [(cols)] AS [NOT] [MATERIALIZED] (body) [, ...]
  let j = c.kw(i + 1) === Kw.RECURSIVE ? i + 2 : i + 1;
  while (j < c.length) {
    j++; // name
    if (c.at(j)?.kind === Tok.LParen) j = c.closing(j) + 1;
    if (c.kw(j) === Kw.AS) j++;
    if (c.kw(j) === Kw.NOT) j++;
    if (c.kw(j) === Kw.MATERIALIZED) j++;
    if (c.at(j)?.kind !== Tok.LParen) break;
    j = c.closing(j) + 1;
    if (c.at(j)?.kind !== Tok.Comma) break;
    j++;
  }
  return { ...commandShape(c, j, dialect), parse: true };
}

function createShape(c: TokenCursor, i: number, command: string, dialect: Dialect): Shape {
  let j = i + 1;
  if (c.kw(j) === Kw.OR && c.kw(j + 1) === Kw.REPLACE) j += 2;
  if (c.kw(j) === Kw.GLOBAL || c.kw(j) === Kw.LOCAL) j++;
  if (c.kw(j) === Kw.TEMPORARY || c.kw(j) === Kw.TEMP) return { family: 'session_state', command, session: pin('temporary table'), parse: true };
  // CREATE [UNLOGGED] TABLE | VIEW | SEQUENCE ... pg_temp.name: a temporary object named by its schema
  for (let k = j; dialect === 'postgresql' && k < Math.min(c.length, j + 8) && c.at(k)?.kind !== Tok.LParen; k++) {
    if (inTempSchema(c, k)) return { family: 'session_state', command, session: pin('temporary table'), parse: true };
  }
  return { family: 'ddl', command, parse: true };
}

/** EXPLAIN / DESCRIBE are utility statements, unless ANALYZE runs a statement that writes. */
function explainShape(c: TokenCursor, i: number, dialect: Dialect, command: string): Shape {
  let j = i + 1;
  const analyze = c.kw(i) === Kw.ANALYZE;
  let runs = analyze;
  if (c.at(j)?.kind === Tok.LParen) {
    const close = c.closing(j);
    for (let k = j; k < close; k++) if (c.kw(k) === Kw.ANALYZE) runs = true;
    j = close + 1;
  }
  while (c.kw(j) === Kw.ANALYZE || c.word(j) === 'VERBOSE' || c.word(j) === 'EXTENDED' || c.word(j) === 'FORMAT' || c.at(j)?.kind === Tok.Operator) {
    if (c.kw(j) === Kw.ANALYZE) runs = true;
    j++;
  }
  const innerKw = c.kw(j);
  const statementFollows = innerKw === Kw.SELECT || innerKw === Kw.INSERT || innerKw === Kw.UPDATE || innerKw === Kw.DELETE || innerKw === Kw.REPLACE || innerKw === Kw.WITH || innerKw === Kw.MERGE || innerKw === Kw.VALUES;
  if (analyze && !statementFollows) return { family: 'ddl', command }; // ANALYZE TABLE / ANALYZE t
  if (runs && statementFollows) {
    const inner = commandShape(c, j, dialect);
    if (inner.family !== 'read') return { ...inner, command, parse: false };
  }
  return { family: 'utility', command };
}

function transactionShape(c: TokenCursor, i: number, dialect: Dialect, command: string): Shape | undefined {
  const kw = c.kw(i);
  const tx = (transaction: TransactionEffect): Shape => ({ family: 'transaction', command, transaction });
  if (kw === Kw.BEGIN) return dialect === 'mysql' && isCompoundCapable(c.tokens.slice(i, i + 3)) ? anonymousBlock(command) : tx('begin');
  if (kw === Kw.START) return c.kw(i + 1) === Kw.TRANSACTION ? tx('begin') : { family: 'ddl', command };
  if (kw === Kw.SAVEPOINT) return tx('savepoint');
  if (kw === Kw.RELEASE) return tx('release_savepoint');
  if (kw === Kw.COMMIT || kw === Kw.END || kw === Kw.ROLLBACK || kw === Kw.ABORT) {
    const ends = kw === Kw.COMMIT || kw === Kw.END ? 'commit' : 'rollback';
    let chain = false;
    for (let j = i + 1; j < c.length; j++) {
      if (c.word(j) === 'PREPARED') return tx('none'); // COMMIT PREPARED 'gid' acts on another transaction
      if (c.kw(j) === Kw.TO) return tx('rollback_to_savepoint');
      if (c.kw(j) === Kw.CHAIN && c.kw(j - 1) !== Kw.NO) chain = true;
    }
    return tx(chain ? (ends === 'commit' ? 'commit_and_chain' : 'rollback_and_chain') : ends);
  }
  if (kw === Kw.PREPARE && c.kw(i + 1) === Kw.TRANSACTION) return tx('commit'); // the transaction leaves the session
  if (kw === Kw.SET) return classifySet(c, i, dialect);
  return undefined;
}

/** MariaDB `BEGIN NOT ATOMIC ... END`: runs whatever its body holds, so it is a write that may leave any state. */
function anonymousBlock(command: string): Shape {
  const detail = 'a compound statement (BEGIN NOT ATOMIC ... END) is not analyzed';
  return { family: 'write', command, session: pin('compound statement'), reasons: [{ code: 'compound_statement', detail }] };
}

function otherShape(c: TokenCursor, i: number, dialect: Dialect, command: string): Shape {
  const kw = c.kw(i);
  if (kw === Kw.USE) return { family: 'session_setting', command, setting: 'database', session: { kind: 'replay', setting: 'database' } };
  if (kw === Kw.PREPARE) return { family: 'session_state', command, session: pin('SQL-level prepared statement') };
  const pinned = PIN_WORDS.get(kw);
  if (pinned !== undefined) return { family: 'session_state', command, session: pin(pinned) };
  if (kw === Kw.RESET) return dialect === 'postgresql' ? { family: 'session_state', command, session: pin('RESET of a setting') } : { family: 'ddl', command };
  if (DDL_WORDS.has(kw)) return { family: 'ddl', command, parse: kw === Kw.ALTER || kw === Kw.TRUNCATE || kw === Kw.RENAME };
  if (kw === Kw.SHOW || UTILITY_WORDS.has(c.word(i))) return { family: 'utility', command };
  if (kw === Kw.CHECK) return { family: 'utility', command };
  if (['PURGE', 'CHANGE', 'STOP', 'BINLOG', 'CACHE', 'UNINSTALL'].includes(c.word(i))) return { family: 'ddl', command };
  return { family: 'session_state', command, session: pin(`unrecognized statement ${command.toUpperCase()}`) };
}
