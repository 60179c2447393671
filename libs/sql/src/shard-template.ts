// Routing templates cached per fingerprint, and binding them to one statement's literals or parameters.
import { isIntegerText, parseIntegerText, type ShardKey, type ShardMap } from '@dbproxy/routing';
import type { DbproxyError } from '@dbproxy/util';
import { ShardKeyInvalid, ShardKeyUnbound, ShardKeyUnmapped } from './errors';
import { literalKey, parameterKey, type KeyValue, type SqlValue } from './literals';
import type { InsertRowGroup, RoutingDecision } from './routing-decision';
import { Tok, type Dialect } from './tokenizer';

/** How a sharded table's key is constrained, in terms of the fingerprint's slots. */
export type KeyExpr =
  /** The union of the values of these slots (`= ?`, `IN (?, ?)`, `IN (?+)`). */
  | { readonly k: 'values'; readonly slots: readonly number[] }
  /** Every part holds: the intersection. */
  | { readonly k: 'and'; readonly parts: readonly KeyExpr[] }
  /** Some part holds: the union. */
  | { readonly k: 'or'; readonly parts: readonly KeyExpr[] };

/** A sharded table reference whose key the statement pins down. */
export interface KeyedRef {
  readonly table: string;
  readonly column: string;
  readonly map: ShardMap;
  readonly expr: KeyExpr;
}

/** Where an INSERT's per-row keys are: a uniform VALUES group (any row count), or listed cells. */
export type InsertKeySource =
  | { readonly kind: 'group'; readonly group: number; readonly slotOffset: number }
  | { readonly kind: 'cells'; readonly group: number; readonly slots: readonly number[] };

export interface InsertKeys {
  readonly table: string;
  readonly column: string;
  readonly map: ShardMap;
  readonly source: InsertKeySource;
}

export type RouteTemplate =
  | { readonly kind: 'fixed'; readonly decision: RoutingDecision }
  | { readonly kind: 'keyed'; readonly refs: readonly KeyedRef[]; readonly insert?: InsertKeys };

/** The literal positions of one statement (a live scan, or a prepared statement's frozen copy). */
export interface SlotData {
  readonly source: string;
  readonly rawInfo: { readonly data: Int32Array };
  readonly rawStart: { readonly data: Int32Array };
  readonly rawEnd: { readonly data: Int32Array };
  readonly slotFrom: { readonly data: Int32Array };
  readonly slotTo: { readonly data: Int32Array };
  readonly groupSlotFrom: { readonly data: Int32Array };
  readonly groupRawFrom: { readonly data: Int32Array };
  readonly groupRawPerRow: { readonly data: Int32Array };
  readonly groupRows: { readonly data: Int32Array };
  readonly groupRowBase: { readonly data: Int32Array };
  readonly rowSrcStart: { readonly data: Int32Array };
  readonly rowSrcEnd: { readonly data: Int32Array };
}

/** Thrown inside binding to abandon it with a ready decision; caught in bindTemplate. */
class Refusal {
  constructor(readonly decision: RoutingDecision) {}
}

const refuse = (error: DbproxyError): never => {
  throw new Refusal({ kind: 'reject', error });
};

/** One binding: reads keys out of slots and maps them to shards. */
class Binder {
  readonly keys: ShardKey[] = [];

  constructor(
    private readonly data: SlotData,
    private readonly params: readonly SqlValue[] | undefined,
    private readonly dialect: Dialect,
  ) {}

  rawKey(raw: number, table: string, column: string): ShardKey {
    const info = this.data.rawInfo.data[raw];
    const kind = info & 0x1f;
    let value: KeyValue;
    if (kind === Tok.Placeholder) {
      const param = (info >> 5) - 1;
      if (this.params === undefined || param < 0 || param >= this.params.length) refuse(ShardKeyUnbound(`${table}.${column}`, param + 1));
      value = parameterKey((this.params as readonly SqlValue[])[param]);
    } else value = literalKey(this.data.source, kind, this.data.rawStart.data[raw], this.data.rawEnd.data[raw], this.dialect);
    if (!value.ok) return refuse(ShardKeyInvalid(`${table}.${column}`, value.reason));
    return value.key;
  }

  shardOf(key: ShardKey, map: ShardMap, table: string, column: string): string {
    let shard: string | undefined;
    try {
      shard = map.shardFor(key);
    } catch (err) {
      return refuse(ShardKeyInvalid(`${table}.${column}`, err instanceof Error ? err.message : String(err)));
    }
    if (shard === undefined) return refuse(ShardKeyUnmapped(String(key), table));
    this.noteKey(key);
    return shard;
  }

  private noteKey(key: ShardKey): void {
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) if (sameKey(keys[i], key)) return;
    keys.push(key);
  }

  evaluate(expr: KeyExpr, ref: KeyedRef): string[] {
    if (expr.k === 'values') {
      const shards: string[] = [];
      for (const slot of expr.slots) {
        for (let raw = this.data.slotFrom.data[slot]; raw < this.data.slotTo.data[slot]; raw++) {
          const shard = this.shardOf(this.rawKey(raw, ref.table, ref.column), ref.map, ref.table, ref.column);
          if (!shards.includes(shard)) shards.push(shard);
        }
      }
      return shards;
    }
    const parts = expr.parts.map((part) => this.evaluate(part, ref));
    if (expr.k === 'or') return union(parts);
    const common = parts.reduce((acc, next) => acc.filter((s) => next.includes(s)));
    return common.length > 0 ? common : parts[0]; // contradictory keys match no row; any one shard answers
  }

  insertRows(insert: InsertKeys): InsertRowGroup[] {
    const d = this.data;
    const groups = new Map<string, { rows: number[]; spans: [number, number][] }>();
    const source = insert.source;
    const g = source.group;
    const rows = source.kind === 'group' ? d.groupRows.data[g] : source.slots.length;
    const base = g >= 0 ? d.groupRowBase.data[g] : -1;
    const rowZeroRaw = source.kind === 'group' ? d.slotFrom.data[d.groupSlotFrom.data[g] + source.slotOffset] : 0;
    for (let r = 0; r < rows; r++) {
      const raw =
        source.kind === 'group' ? rowZeroRaw + r * d.groupRawPerRow.data[g] : d.slotFrom.data[source.slots[r]];
      const shard = this.shardOf(this.rawKey(raw, insert.table, insert.column), insert.map, insert.table, insert.column);
      let entry = groups.get(shard);
      if (entry === undefined) groups.set(shard, (entry = { rows: [], spans: [] }));
      entry.rows.push(r);
      if (base >= 0) entry.spans.push([d.rowSrcStart.data[base + r], d.rowSrcEnd.data[base + r]]);
    }
    return [...groups].map(([shard, entry]) => ({ shard, rows: entry.rows, spans: entry.spans }));
  }
}

/** Whether two keys are the same key for placement: 7, 7n and '7' are. */
function sameKey(a: ShardKey, b: ShardKey): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return false;
  return canonicalKey(a) === canonicalKey(b);
}

function canonicalKey(key: ShardKey): string {
  if (typeof key !== 'string') return String(key);
  return isIntegerText(key) ? String(parseIntegerText(key)) : `'${key}`;
}

function union(sets: string[][]): string[] {
  const out: string[] = [];
  for (const set of sets) for (const s of set) if (!out.includes(s)) out.push(s);
  return out;
}

/** Binds a template to one statement's values: the shard decision for this execution. */
export function bindTemplate(template: RouteTemplate, data: SlotData, params: readonly SqlValue[] | undefined, dialect: Dialect): RoutingDecision {
  if (template.kind === 'fixed') return template.decision;
  const binder = new Binder(data, params, dialect);
  try {
    const refs = template.refs;
    if (refs.length === 1 && template.insert === undefined) {
      return { kind: 'shards', shards: binder.evaluate(refs[0].expr, refs[0]), keys: binder.keys, via: 'key' };
    }
    const sets: string[][] = refs.map((ref) => binder.evaluate(ref.expr, ref));
    let rows: InsertRowGroup[] | undefined;
    if (template.insert !== undefined) {
      rows = binder.insertRows(template.insert);
      sets.push(rows.map((group) => group.shard));
    }
    const shards = sets.length === 1 ? sets[0] : union(sets);
    return rows === undefined ? { kind: 'shards', shards, keys: binder.keys, via: 'key' } : { kind: 'shards', shards, keys: binder.keys, via: 'key', rows };
  } catch (err) {
    if (err instanceof Refusal) return err.decision;
    throw err;
  }
}

/**
 * How many leading parameters binding `template` to `data` can read: one more than the highest
 * placeholder index among the slots its keys come from (0 for a fixed template). A prepared
 * statement's executions need only those values decoded for routing.
 */
export function parametersRead(template: RouteTemplate, data: SlotData): number {
  if (template.kind === 'fixed') return 0;
  let count = 0;
  const noteRaw = (raw: number): void => {
    const info = data.rawInfo.data[raw];
    if ((info & 0x1f) === Tok.Placeholder) count = Math.max(count, info >> 5); // (info >> 5) - 1 is the index
  };
  const noteExpr = (expr: KeyExpr): void => {
    if (expr.k !== 'values') return expr.parts.forEach(noteExpr);
    for (const slot of expr.slots) for (let raw = data.slotFrom.data[slot]; raw < data.slotTo.data[slot]; raw++) noteRaw(raw);
  };
  for (const ref of template.refs) noteExpr(ref.expr);
  const insert = template.insert;
  if (insert !== undefined) {
    const source = insert.source;
    const g = source.group;
    if (source.kind === 'cells') for (const slot of source.slots) noteRaw(data.slotFrom.data[slot]);
    else {
      const rowZeroRaw = data.slotFrom.data[data.groupSlotFrom.data[g] + source.slotOffset];
      for (let r = 0; r < data.groupRows.data[g]; r++) noteRaw(rowZeroRaw + r * data.groupRawPerRow.data[g]);
    }
  }
  return count;
}
