// SqlRouter: classification and shard routing of every statement, behind a fingerprint-keyed LRU cache.
import { channel } from 'node:diagnostics_channel';
import type { ShardRule } from '@dbproxy/routing';
import { BoundedLru, Channels, type LruStats } from '@dbproxy/util';
import { analyzeSafely, type AnalyzerConfig, type AnalyzerCounters, type CacheEntry, type Fingerprint, type ScanFacts } from './analyze';
import type { Classification } from './classification';
import type { RoutingHints } from './comments';
import { InvalidRouterOptions, ShardHintConflict, UnknownShardHint } from './errors';
import { Fingerprinter, type StatementScan } from './fingerprint';
import { canonicalFunctionName } from './functions';
import { literalKey, parameterKey, type SqlValue } from './literals';
import type { RoutingDecision } from './routing-decision';
import { ShapeMemo } from './shape-memo';
import { ShardRuleSet } from './shard-rules';
import { bindTemplate, parametersRead, type SlotData } from './shard-template';
import { StatementParser } from './statement-parser';
import { Tok, type Dialect } from './tokenizer';

export interface SqlRouterOptions {
  readonly dialect: Dialect;
  readonly shardRules: readonly ShardRule[];
  /** Statements whose keys cannot be pinned to a finite set: run on every shard, or refuse. */
  readonly multiShard: 'all_shards' | 'reject';
  /** Fingerprints kept (LRU). */
  readonly cacheSize: number;
  /** User-defined functions that are safe on replicas (bare or schema-qualified names). */
  readonly allowedFunctions?: readonly string[];
  /**
   * Bound on node-sql-parser's work per miss: a statement whose reduced parse text (select lists and
   * ORDER BY left out) has more tokens than this, a token inside nested parentheses counting extra,
   * is not parsed: primary-only, and refused on a sharded table. Default DEFAULT_MAX_PARSE_TOKENS (200).
   */
  readonly maxParseTokens?: number;
}

/** Everything the proxy needs to know to send one statement somewhere. */
export interface SqlRoute {
  readonly classification: Classification;
  readonly fingerprint: Fingerprint;
  /** W3C trace context from a sqlcommenter comment. */
  readonly traceparent?: string;
  readonly tracestate?: string;
  readonly hints: RoutingHints;
  readonly decision: RoutingDecision;
  /** The statement may go to a replica: replica-safe and not forced to the primary by a hint. */
  readonly replicaEligible: boolean;
  readonly cache: 'hit' | 'miss';
}

/** A statement prepared once (MySQL COM_STMT_PREPARE, PostgreSQL Parse) and executed many times. */
export interface PreparedRoute {
  readonly text: string;
  readonly fingerprint: Fingerprint;
  /** Placeholders in the statement (`?` count, or the highest `$n`). */
  readonly parameterCount: number;
  /**
   * How many leading parameter values routePrepared() reads (shard keys, SET autocommit = ?):
   * an execution may pass only those (the rest need not be decoded).
   */
  readonly routingParameters: number;
  readonly entry: CacheEntry;
  readonly data: SlotData;
  readonly traceparent?: string;
  readonly tracestate?: string;
  readonly hints: RoutingHints;
}

export interface SqlRouterStats extends LruStats {
  /** node-sql-parser runs (cache misses that needed a parse). */
  readonly parses: number;
  readonly parseFailures: number;
  /** Misses that skipped node-sql-parser because the statement exceeded maxParseTokens. */
  readonly tooComplex: number;
  /** Distinct fingerprints that shared a cache key (resolved by comparing text). */
  readonly keyCollisions: number;
}

const cacheLookup = channel(Channels.sqlCacheLookup);

/** Default maxParseTokens: ORM-sized statements (a few joins, 10-20 AND-ed conditions) parse within about 1 ms. */
export const DEFAULT_MAX_PARSE_TOKENS = 200;

export class SqlRouter {
  readonly dialect: Dialect;
  private readonly fingerprinter: Fingerprinter;
  /** Fingerprint key -> entry, and the normalized text's code units to confirm a hit exactly. */
  private readonly cache: BoundedLru<number, { readonly entry: CacheEntry; readonly codes: Uint16Array }>;
  private readonly config: AnalyzerConfig;
  private readonly counters: AnalyzerCounters = { parses: 0, parseFailures: 0, tooComplex: 0 };
  private keyCollisions = 0;
  /** Simple statements whose route does not depend on their literals, found again by text (no tokenizer run). */
  private readonly shapes: ShapeMemo<SqlRoute>;

  constructor(options: SqlRouterOptions) {
    validate(options);
    this.dialect = options.dialect;
    this.fingerprinter = new Fingerprinter(options.dialect);
    this.cache = new BoundedLru(options.cacheSize);
    this.shapes = new ShapeMemo(Math.min(options.cacheSize, MAX_SHAPES));
    this.config = {
      dialect: options.dialect,
      rules: new ShardRuleSet(options.shardRules),
      multiShard: options.multiShard,
      allowedFunctions: new Set((options.allowedFunctions ?? []).map((f) => canonicalFunctionName(options.dialect, f))),
      parser: new StatementParser(options.dialect),
      maxParseTokens: options.maxParseTokens ?? DEFAULT_MAX_PARSE_TOKENS,
    };
  }

  /** Routes statement text; `params` bind its placeholders when it has any. Never throws. */
  route(text: string, params?: readonly SqlValue[]): SqlRoute {
    if (params === undefined) {
      const known = this.shapes.find(text);
      if (known !== undefined) {
        if (cacheLookup.hasSubscribers) cacheLookup.publish({ hit: true });
        return known;
      }
    }
    const scan = this.fingerprinter.run(text);
    const [entry, cache] = this.lookup(scan);
    const classification = entry.autocommit === undefined ? entry.classification : this.autocommitVariant(entry, scan, params);
    const decision = bindTemplate(entry.template.template, scan, params, this.dialect);
    const comments = scan.comments;
    const route = this.result(entry, classification, decision, comments.hints, comments.traceparent, comments.tracestate, cache);
    if (params === undefined && valueFree(entry, scan)) this.shapes.remember(text, scan, cache === 'hit' ? route : { ...route, cache: 'hit' });
    return route;
  }

  /**
   * The route of a statement given as its UTF-8 bytes `b[start, end)` when it has a known shape
   * (what `route` on the decoded text would return), found without decoding them; undefined
   * otherwise: the caller then decodes the text and routes it with `route`.
   */
  routeKnownBytes(b: Buffer, start: number, end: number): SqlRoute | undefined {
    const known = this.shapes.findBytes(b, start, end);
    if (known !== undefined && cacheLookup.hasSubscribers) cacheLookup.publish({ hit: true });
    return known;
  }

  /** Scans and analyzes a statement once; routePrepared() then binds values without re-parsing. */
  prepare(text: string): PreparedRoute {
    const scan = this.fingerprinter.run(text);
    const [entry] = this.lookup(scan);
    let parameterCount = 0;
    for (let raw = 0; raw < scan.rawInfo.length; raw++) parameterCount = Math.max(parameterCount, scan.rawParam(raw) + 1);
    const { traceparent, tracestate, hints } = scan.comments;
    const data = freeze(scan);
    const routingParameters = Math.min(parameterCount, Math.max(parametersRead(entry.template.template, data), this.autocommitParameters(entry, data)));
    return { text, fingerprint: entry.fingerprint, parameterCount, routingParameters, entry, data, traceparent, tracestate, hints };
  }

  /** Routes one execution of a prepared statement with its typed parameter values. */
  routePrepared(prepared: PreparedRoute, params: readonly SqlValue[]): SqlRoute {
    const entry = prepared.entry;
    const classification = entry.autocommit === undefined ? entry.classification : this.autocommitVariant(entry, prepared.data, params);
    const decision = bindTemplate(entry.template.template, prepared.data, params, this.dialect);
    return this.result(entry, classification, decision, prepared.hints, prepared.traceparent, prepared.tracestate, 'hit');
  }

  stats(): SqlRouterStats {
    const lru = this.cache.stats();
    return { ...lru, hits: lru.hits + this.shapes.hits, ...this.counters, keyCollisions: this.keyCollisions };
  }

  private lookup(scan: StatementScan): [CacheEntry, 'hit' | 'miss'] {
    const key = scan.out.key();
    let cached = this.cache.get(key);
    if (cached !== undefined && !scan.out.sameAs(cached.codes)) {
      this.keyCollisions++;
      cached = undefined;
    }
    if (cacheLookup.hasSubscribers) cacheLookup.publish({ hit: cached !== undefined });
    if (cached !== undefined) return [cached.entry, 'hit'];
    const entry = analyzeSafely(scan.out.toString(), scanFacts(scan), this.config, this.counters);
    this.cache.set(key, { entry, codes: scan.out.codes() });
    return [entry, 'miss'];
  }

  private result(
    entry: CacheEntry,
    classification: Classification,
    bound: RoutingDecision,
    hints: RoutingHints,
    traceparent: string | undefined,
    tracestate: string | undefined,
    cache: 'hit' | 'miss',
  ): SqlRoute {
    const decision = hints.shard === undefined ? bound : this.applyShardHint(bound, hints.shard, entry.template.hintable);
    const replicaEligible = classification.replicaSafe && hints.route !== 'primary';
    return { classification, fingerprint: entry.fingerprint, traceparent, tracestate, hints, decision, replicaEligible, cache };
  }

  /** A dbproxy_shard hint names the shard where the statement has no key; it must agree with a key it has. */
  private applyShardHint(decision: RoutingDecision, shard: string, hintable: boolean): RoutingDecision {
    const rules = this.config.rules;
    if (rules.empty) return decision;
    if (!rules.allShards.includes(shard)) return { kind: 'reject', error: UnknownShardHint(shard) };
    if (decision.kind === 'shards') {
      if (decision.shards.length === 1 && decision.shards[0] === shard) return decision;
      return { kind: 'reject', error: ShardHintConflict(shard, decision.shards.join(', ')) };
    }
    if (decision.kind === 'reject' && !hintable) return decision;
    return { kind: 'shards', shards: [shard], keys: [], via: 'hint' };
  }

  /** The parameters autocommitVariant() reads: up to its slot's placeholder, if it is one. */
  private autocommitParameters(entry: CacheEntry, data: SlotData): number {
    if (entry.autocommit === undefined) return 0;
    const info = data.rawInfo.data[data.slotFrom.data[entry.autocommit.slot]];
    return (info & 0x1f) === Tok.Placeholder ? info >> 5 : 0;
  }

  /** SET autocommit = <literal or parameter>: on or off depends on this execution's value. */
  private autocommitVariant(entry: CacheEntry, data: SlotData, params: readonly SqlValue[] | undefined): Classification {
    const variants = entry.autocommit as NonNullable<CacheEntry['autocommit']>;
    const raw = data.slotFrom.data[variants.slot];
    const info = data.rawInfo.data[raw];
    const kind = info & 0x1f;
    const value =
      kind === Tok.Placeholder
        ? parameterKey(params?.[(info >> 5) - 1])
        : literalKey(data.source, kind, data.rawStart.data[raw], data.rawEnd.data[raw], this.dialect);
    if (!value.ok) return variants.off;
    const text = String(value.key).toUpperCase();
    return text === '1' || text === 'ON' || text === 'TRUE' ? variants.on : variants.off;
  }
}

/** Shapes SqlRouter keeps at most (ShapeMemo), within its cache size. */
const MAX_SHAPES = 1024;

/**
 * Whether every statement of this one's shape gets the same route: none of it depends on a literal's
 * value (no shard key read from one, no SET autocommit variant) and no comment carries hints or trace
 * context; a single complete statement.
 */
function valueFree(entry: CacheEntry, scan: StatementScan): boolean {
  if (entry.autocommit !== undefined || entry.template.template.kind !== 'fixed' || scan.statementCount > 1 || scan.unterminated !== undefined) return false;
  const source = scan.source;
  return source.indexOf('--') < 0 && source.indexOf('/*') < 0 && source.indexOf('#') < 0;
}

function validate(options: SqlRouterOptions): void {
  if (options === null || typeof options !== 'object') throw InvalidRouterOptions('options object required');
  if (options.dialect !== 'mysql' && options.dialect !== 'postgresql') throw InvalidRouterOptions(`unknown dialect ${JSON.stringify(options.dialect)}`);
  if (options.multiShard !== 'all_shards' && options.multiShard !== 'reject') throw InvalidRouterOptions('multiShard must be "all_shards" or "reject"');
  if (!Number.isInteger(options.cacheSize) || options.cacheSize < 1) throw InvalidRouterOptions(`cacheSize must be a positive integer, got ${options.cacheSize}`);
  if (!Array.isArray(options.shardRules)) throw InvalidRouterOptions('shardRules must be an array');
  const max = options.maxParseTokens;
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) throw InvalidRouterOptions('maxParseTokens must be a positive integer');
}

function scanFacts(scan: StatementScan): ScanFacts {
  const slotFrom: number[] = [];
  const slotCount: number[] = [];
  const uniform: boolean[] = [];
  for (let g = 0; g < scan.groupRows.length; g++) {
    slotFrom.push(scan.groupSlotFrom.data[g]);
    slotCount.push(scan.groupSlotCount.data[g]);
    uniform.push(scan.groupRawPerRow.data[g] >= 0);
  }
  return {
    slotCount: scan.slotCount,
    slotOffsets: new Set(scan.slotOut.toArray()),
    groups: { slotFrom, slotCount, uniform },
    unterminated: scan.unterminated !== undefined,
  };
}

/** A copy of a scan's literal positions that outlives the fingerprinter's next run. */
function freeze(scan: StatementScan): SlotData {
  const copy = (column: { data: Int32Array; length: number }) => ({ data: column.data.slice(0, column.length) });
  return {
    source: scan.source,
    rawInfo: copy(scan.rawInfo),
    rawStart: copy(scan.rawStart),
    rawEnd: copy(scan.rawEnd),
    slotFrom: copy(scan.slotFrom),
    slotTo: copy(scan.slotTo),
    groupSlotFrom: copy(scan.groupSlotFrom),
    groupRawFrom: copy(scan.groupRawFrom),
    groupRawPerRow: copy(scan.groupRawPerRow),
    groupRows: copy(scan.groupRows),
    groupRowBase: copy(scan.groupRowBase),
    rowSrcStart: copy(scan.rowSrcStart),
    rowSrcEnd: copy(scan.rowSrcEnd),
  };
}
