// The miss path: from a fingerprint's normalized text to the classification and routing template cached for it.
import { fnv1a64Hex } from '@dbproxy/routing';
import { dominantFamily, type Classification, type TableRef, type UnsafeReason } from './classification';
import { EmptyStatement, ShardRoutingUnsupported } from './errors';
import { classifyLexically, type LexicalAnalysis } from './lexical';
import { normalizedTokens, splitStatements, TokenCursor, type NToken } from './normalized';
import { buildProbe } from './probe';
import { ShardAnalysis, type ValuesGroups } from './shard-analysis';
import type { ShardRuleSet } from './shard-rules';
import type { StatementParser } from './statement-parser';
import { identifierNames } from './table-guess';
import { shardTemplate, type TemplateChoice } from './template-build';
import type { Dialect } from './tokenizer';
import { UNSHARDED, type RoutingDecision } from './routing-decision';

/** A statement's fingerprint: normalized text and its FNV-1a 64 hash (16 hex digits). */
export interface Fingerprint {
  readonly text: string;
  readonly hash: string;
}

/** What the cache holds per fingerprint. */
export interface CacheEntry {
  readonly fingerprint: Fingerprint;
  readonly classification: Classification;
  /** SET autocommit = <literal>: the classification depends on the value in `slot`. */
  readonly autocommit?: { readonly slot: number; readonly off: Classification; readonly on: Classification };
  readonly template: TemplateChoice;
}

export interface AnalyzerConfig {
  readonly dialect: Dialect;
  readonly rules: ShardRuleSet;
  readonly multiShard: 'all_shards' | 'reject';
  readonly allowedFunctions: ReadonlySet<string>;
  readonly parser: StatementParser;
  readonly maxParseTokens: number;
}

/** Counters of the miss path, reported by SqlRouter.stats(). */
export interface AnalyzerCounters {
  parses: number;
  parseFailures: number;
  tooComplex: number;
}

/** Facts about the statement from the scan that produced the fingerprint. */
export interface ScanFacts {
  readonly slotCount: number;
  /** Where each slot is in the normalized text. */
  readonly slotOffsets: ReadonlySet<number>;
  readonly groups: ValuesGroups;
  readonly unterminated: boolean;
}

/**
 * analyze(), with a safety net: an unexpected failure (an AST shape nobody foresaw) retries from
 * tokens alone, and if even that fails the statement pins the session, goes to the primary and,
 * with sharding, is refused. Routing never throws.
 */
export function analyzeSafely(text: string, scan: ScanFacts, config: AnalyzerConfig, counters: AnalyzerCounters): CacheEntry {
  try {
    return analyze(text, scan, config, counters, false);
  } catch (first) {
    try {
      return analyze(text, scan, config, counters, true, first);
    } catch {
      return unanalyzable(text, config);
    }
  }
}

function unanalyzable(text: string, config: AnalyzerConfig): CacheEntry {
  const reason = 'the statement could not be analyzed';
  const lex: LexicalAnalysis = { ...emptyLexical(), family: 'session_state', command: 'unknown', session: { kind: 'pin', reason }, unsafe: [{ code: 'parse_failed', detail: reason }] };
  const classification = build(lex, { tables: [], extra: [], parsed: false, count: 1 });
  const decision: RoutingDecision = config.rules.empty ? UNSHARDED : { kind: 'reject', error: ShardRoutingUnsupported(reason) };
  return { fingerprint: { text, hash: fnv1a64Hex(text) }, classification, template: { template: { kind: 'fixed', decision }, hintable: true } };
}

export function analyze(text: string, scan: ScanFacts, config: AnalyzerConfig, counters: AnalyzerCounters, tokensOnly = false, cause?: unknown): CacheEntry {
  const fingerprint = { text, hash: fnv1a64Hex(text) };
  const statements = splitStatements(normalizedTokens(text, config.dialect, scan.slotOffsets), config.dialect);
  if (statements.length === 0) {
    const classification = build(emptyLexical(), { tables: [], extra: [], parsed: false, count: 0 });
    return { fingerprint, classification, template: { template: { kind: 'fixed', decision: { kind: 'reject', error: EmptyStatement() } }, hintable: false } };
  }
  const lexical = statements.map((s) => classifyLexically(new TokenCursor(s), config.dialect, config.allowedFunctions));
  if (statements.length > 1 || scan.unterminated) return unparsedEntry(fingerprint, statements, lexical, scan, config);
  const lex = lexical[0];
  const names = identifierNames(new TokenCursor(statements[0]));
  const detail = `analysis failed: ${cause instanceof Error ? cause.message : String(cause)}`;
  const failed: Structure = { extra: [{ code: 'parse_failed', detail }], failure: `its ${detail}` };
  const structure = !lex.parse ? { extra: [] } : tokensOnly ? failed : parseStructure(text, statements[0], lex, names, scan, config, counters);
  const parts = { tables: tablesOf(structure.parsed, lex.tables), extra: structure.extra, parsed: structure.shard !== undefined, count: 1 };
  const classification = build(lex, parts);
  const template = shardTemplate(lex, structure.shard?.facts, names, config, structure.failure);
  return withAutocommit({ fingerprint, classification, template }, lex, parts);
}

interface Structure {
  readonly extra: UnsafeReason[];
  /** Why node-sql-parser gave no AST, for a user who sees the statement refused. */
  readonly failure?: string;
  readonly shard?: ShardAnalysis;
  readonly parsed?: ParsedTables;
}

/** node-sql-parser on the probe (within the bound), then the AST walk for tables and shard keys. */
function parseStructure(
  text: string,
  tokens: NToken[],
  lex: LexicalAnalysis,
  names: ReadonlySet<string>,
  scan: ScanFacts,
  config: AnalyzerConfig,
  counters: AnalyzerCounters,
): Structure {
  const keyFree = ![...names].some((n) => config.rules.hasTable(n));
  const probe = buildProbe(text, tokens, config.dialect, lex.strip, keyFree);
  if (probe.tokens > config.maxParseTokens) {
    counters.tooComplex++;
    const detail = `${probe.tokens} tokens to parse exceed the bound of ${config.maxParseTokens}`;
    const section = config.dialect === 'mysql' ? 'mysql' : 'postgres';
    const failure =
      `it is too long to analyze: ${probe.tokens} tokens to parse (select lists and ORDER BY left out, nested parentheses counted extra) ` +
      `exceed the limit of ${config.maxParseTokens} (SqlRouter maxParseTokens, config key [${section}] max_parse_tokens); raise the limit, shorten the statement`;
    return { extra: [{ code: 'too_complex', detail }], failure };
  }
  counters.parses++;
  const outcome = config.parser.parse(probe.text);
  if (!outcome.ok) {
    counters.parseFailures++;
    return { extra: [{ code: 'parse_failed', detail: outcome.reason }], failure: `node-sql-parser cannot parse it (${outcome.reason})` };
  }
  const shard = new ShardAnalysis(config.rules, scan.slotCount, scan.groups);
  shard.statement(outcome.ast, new Set());
  return { extra: [], shard, parsed: { ast: outcome.ast, tableList: outcome.tableList, own: shard.facts.tables } };
}

function unparsedEntry(fingerprint: Fingerprint, statements: NToken[][], lexical: LexicalAnalysis[], scan: ScanFacts, config: AnalyzerConfig): CacheEntry {
  const merged = mergeLexical(lexical);
  const extra: UnsafeReason[] = [];
  if (statements.length > 1) extra.push({ code: 'multi_statement', detail: `${statements.length} statements in one request` });
  if (scan.unterminated) extra.push({ code: 'unterminated', detail: 'the statement ends inside a string, identifier or comment' });
  const classification = build(merged, { tables: merged.tables, extra, parsed: false, count: statements.length });
  const names = new Set<string>();
  for (const s of statements) identifierNames(new TokenCursor(s)).forEach((n) => names.add(n));
  const touchesSharded = [...names].some((n) => config.rules.hasTable(n));
  const why = statements.length > 1 ? 'a multi-statement batch; send its statements one at a time' : 'the statement is unterminated';
  const decision: RoutingDecision = touchesSharded ? { kind: 'reject', error: ShardRoutingUnsupported(why) } : UNSHARDED;
  const template: TemplateChoice = { template: { kind: 'fixed', decision }, hintable: true };
  return { fingerprint, classification, template };
}

function mergeLexical(all: LexicalAnalysis[]): LexicalAnalysis {
  const first = all[0];
  const merged: LexicalAnalysis = { ...first, unsafe: [...first.unsafe], tables: [...first.tables], command: all.length > 1 ? 'batch' : first.command };
  for (const next of all.slice(1)) {
    merged.family = dominantFamily(merged.family, next.family);
    merged.unsafe.push(...next.unsafe);
    merged.tables.push(...next.tables);
    if (merged.transaction === 'none') merged.transaction = next.transaction;
    if (next.session.kind === 'pin' || (next.session.kind === 'replay' && merged.session.kind === 'none')) merged.session = next.session;
    merged.locking ||= next.locking;
    merged.returning ||= next.returning;
  }
  if (merged.family === 'session_setting' && merged.setting === undefined) merged.family = 'session_state';
  merged.autocommitSlot = -1;
  return merged;
}

function emptyLexical(): LexicalAnalysis {
  return {
    family: 'utility', command: 'empty', transaction: 'none', autocommitSlot: -1, session: { kind: 'none' },
    unsafe: [{ code: 'not_a_read', detail: 'the statement is empty' }],
    locking: false, returning: false, strip: [], parse: false, tables: [],
  };
}

const DML = new Set(['select', 'insert', 'replace', 'update', 'delete']);

/**
 * Queries and DML: the tables the AST walk found (scoped, so CTE names are not tables). Other
 * parsed statements (DDL): node-sql-parser's table list. Unparsed: the token guess.
 */
interface ParsedTables {
  readonly ast: { readonly type?: unknown };
  readonly tableList: readonly string[];
  readonly own: readonly TableRef[];
}

function tablesOf(parsed: ParsedTables | undefined, guessed: readonly TableRef[]): readonly TableRef[] {
  if (parsed === undefined) return guessed;
  if (DML.has(String(parsed.ast.type))) return parsed.own;
  const out: TableRef[] = [];
  for (const entry of parsed.tableList) {
    const [action, db, name] = entry.split('::');
    if (name === undefined || name === 'null' || out.some((t) => t.name === name && (t.schema ?? 'null') === db)) continue;
    const access = /^(select|show|use)$/i.test(action) ? 'read' : 'write';
    out.push(db === 'null' ? { name, access } : { schema: db, name, access });
  }
  return out.length > 0 ? out : guessed;
}

interface Parts {
  readonly tables: readonly TableRef[];
  readonly extra: readonly UnsafeReason[];
  readonly parsed: boolean;
  readonly count: number;
}

function build(lex: LexicalAnalysis, parts: Parts): Classification {
  const unsafeReasons = [...lex.unsafe, ...parts.extra];
  const common = {
    command: lex.command,
    replicaSafe: lex.family === 'read' && unsafeReasons.length === 0 && parts.count === 1,
    unsafeReasons,
    tables: parts.tables,
    transaction: lex.transaction,
    session: lex.session,
    statementCount: parts.count,
    analyzedBy: parts.parsed ? ('parser' as const) : ('tokens' as const),
  };
  switch (lex.family) {
    case 'read':
      return { ...common, family: 'read', locking: lex.locking };
    case 'write':
      return { ...common, family: 'write', returning: lex.returning };
    case 'session_setting':
      return { ...common, family: 'session_setting', setting: lex.setting ?? 'names' };
    case 'session_state':
      return { ...common, family: 'session_state', pinReason: lex.session.kind === 'pin' ? lex.session.reason : 'session state' };
    default:
      return { ...common, family: lex.family };
  }
}

function withAutocommit(entry: CacheEntry, lex: LexicalAnalysis, parts: Parts): CacheEntry {
  if (lex.autocommitSlot < 0) return entry;
  const off = build({ ...lex, transaction: 'autocommit_off' }, parts);
  const on = build({ ...lex, transaction: 'autocommit_on' }, parts);
  return { ...entry, classification: off, autocommit: { slot: lex.autocommitSlot, off, on } };
}
