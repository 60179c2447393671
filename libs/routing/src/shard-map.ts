// Shard maps: hash (integer modulo, FNV-1a 64 for strings), half-open integer ranges, exact values.
import { InvalidShardMapSpec, OverlappingRanges } from './errors';
import { fnv1a64Mod } from './fnv';
import { integerOfNumber, isIntegerText, parseIntegerText, type ShardKey } from './shard-key';

/** How a sharded table's key column maps to shard names. Range bounds are half-open [from, to). */
export type ShardMapSpec =
  | { kind: 'hash'; shards: string[] }
  | { kind: 'range'; ranges: { from?: bigint; to?: bigint; shard: string }[] }
  | { kind: 'value'; values: Record<string, string>; defaultShard?: string };

/** A sharded table: `table` is `schema.table` or a bare name (any schema). */
export type ShardRule = { table: string; column: string; map: ShardMapSpec };

export interface ShardMap {
  readonly kind: ShardMapSpec['kind'];
  /** Every shard name this map can return, each once, in spec order. */
  readonly shards: readonly string[];
  /** The shard holding `key`, or undefined when the key is unmapped. */
  shardFor(key: ShardKey): string | undefined;
}

/** A shard map as the configuration writes it (`[postgres.sharding] map`, `[redis.sharding] map`). */
export type ShardMapSettings =
  | { readonly kind: 'hash'; readonly shards: readonly string[] }
  | { readonly kind: 'range'; readonly ranges: readonly { readonly from?: bigint; readonly to?: bigint; readonly shard: string }[] }
  | { readonly kind: 'value'; readonly values: Readonly<Record<string, string>>; readonly default_shard?: string };

/** The configuration's form of a shard map as a spec (snake_case keys, read-only arrays copied). */
export function shardMapSpecFromSettings(map: ShardMapSettings): ShardMapSpec {
  switch (map.kind) {
    case 'hash':
      return { kind: 'hash', shards: [...map.shards] };
    case 'range':
      return { kind: 'range', ranges: map.ranges.map((r) => ({ from: r.from, to: r.to, shard: r.shard })) };
    case 'value':
      return { kind: 'value', values: { ...map.values }, defaultShard: map.default_shard };
  }
}

/** Builds a shard map from the configuration's form of it (see createShardMap). */
export function shardMapFromSettings(map: ShardMapSettings): ShardMap {
  return createShardMap(shardMapSpecFromSettings(map));
}

/** Builds a shard map, validating the spec (throws DBP_ERR_ROUTING_INVALID_SPEC / _RANGE_OVERLAP). */
export function createShardMap(spec: ShardMapSpec): ShardMap {
  switch (spec.kind) {
    case 'hash':
      return new HashShardMap(spec.shards);
    case 'range':
      return new RangeShardMap(spec.ranges);
    case 'value':
      return new ValueShardMap(spec.values, spec.defaultShard);
    default:
      throw InvalidShardMapSpec(`unknown kind ${JSON.stringify((spec as { kind?: unknown }).kind)}`);
  }
}

function checkShardName(name: unknown, where: string): string {
  if (typeof name !== 'string' || name.length === 0) throw InvalidShardMapSpec(`${where}: shard name must be a non-empty string`);
  return name;
}

/** Integers by Euclidean modulo; other strings by FNV-1a 64 of their UTF-8 bytes, modulo. */
class HashShardMap implements ShardMap {
  readonly kind = 'hash';
  readonly shards: readonly string[];
  private readonly count: number;
  private readonly countBig: bigint;

  constructor(shards: readonly string[]) {
    if (!Array.isArray(shards) || shards.length === 0) throw InvalidShardMapSpec('hash map needs at least one shard');
    shards.forEach((s, i) => checkShardName(s, `shards[${i}]`));
    this.shards = [...shards];
    this.count = shards.length;
    this.countBig = BigInt(shards.length);
  }

  shardFor(key: ShardKey): string | undefined {
    if (typeof key === 'number') {
      integerOfNumber(key);
      return this.shards[((key % this.count) + this.count) % this.count];
    }
    if (typeof key === 'bigint') return this.shards[Number(((key % this.countBig) + this.countBig) % this.countBig)];
    if (isIntegerText(key)) return this.shardFor(parseIntegerText(key));
    return this.shards[fnv1a64Mod(key, this.count)];
  }
}

type Range = { from?: bigint; to?: bigint; shard: string };

const describeRange = (r: Range): string => `[${r.from ?? '-inf'}, ${r.to ?? '+inf'}) -> ${r.shard}`;

/** Half-open [from, to) integer ranges; a missing bound is unbounded. Keys are exact bigints. */
class RangeShardMap implements ShardMap {
  readonly kind = 'range';
  readonly shards: readonly string[];
  private readonly sorted: Range[];

  constructor(ranges: readonly Range[]) {
    if (!Array.isArray(ranges) || ranges.length === 0) throw InvalidShardMapSpec('range map needs at least one range');
    ranges.forEach((r, i) => {
      checkShardName(r.shard, `ranges[${i}]`);
      for (const bound of [r.from, r.to]) {
        if (bound !== undefined && typeof bound !== 'bigint') throw InvalidShardMapSpec(`ranges[${i}]: bounds must be bigint`);
      }
      if (r.from !== undefined && r.to !== undefined && r.from >= r.to) {
        throw InvalidShardMapSpec(`ranges[${i}] ${describeRange(r)} is empty: from must be below to`);
      }
    });
    const low = (r: Range): bigint | undefined => r.from;
    this.sorted = [...ranges].sort((a, b) => {
      const la = low(a);
      const lb = low(b);
      if (la === lb) return 0;
      if (la === undefined) return -1;
      if (lb === undefined) return 1;
      return la < lb ? -1 : 1;
    });
    for (let i = 1; i < this.sorted.length; i++) {
      const prev = this.sorted[i - 1];
      const cur = this.sorted[i];
      if (prev.to === undefined || cur.from === undefined || cur.from < prev.to) {
        throw OverlappingRanges(describeRange(prev), describeRange(cur));
      }
    }
    this.shards = [...new Set(ranges.map((r) => r.shard))];
  }

  shardFor(key: ShardKey): string | undefined {
    let value: bigint;
    if (typeof key === 'bigint') value = key;
    else if (typeof key === 'number') value = integerOfNumber(key);
    else if (isIntegerText(key)) value = parseIntegerText(key);
    else return undefined;
    // Binary search for the last range whose lower bound is <= value.
    let lo = 0;
    let hi = this.sorted.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const from = this.sorted[mid].from;
      if (from === undefined || from <= value) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return undefined;
    const range = this.sorted[found];
    return range.to === undefined || value < range.to ? range.shard : undefined;
  }
}

/** Exact values: numbers and bigints look up their decimal text; strings look up themselves. */
class ValueShardMap implements ShardMap {
  readonly kind = 'value';
  readonly shards: readonly string[];
  private readonly values: Map<string, string>;

  constructor(
    values: Record<string, string>,
    private readonly defaultShard?: string,
  ) {
    if (values === null || typeof values !== 'object') throw InvalidShardMapSpec('value map needs a values object');
    this.values = new Map(Object.entries(values).map(([k, s]) => [k, checkShardName(s, `values[${JSON.stringify(k)}]`)]));
    if (defaultShard !== undefined) checkShardName(defaultShard, 'defaultShard');
    if (this.values.size === 0 && defaultShard === undefined) throw InvalidShardMapSpec('value map needs values or a defaultShard');
    const all = [...this.values.values()];
    if (defaultShard !== undefined) all.push(defaultShard);
    this.shards = [...new Set(all)];
  }

  shardFor(key: ShardKey): string | undefined {
    let text: string;
    if (typeof key === 'string') text = key;
    else if (typeof key === 'bigint') text = key.toString();
    else text = integerOfNumber(key).toString();
    return this.values.get(text) ?? this.defaultShard;
  }
}

