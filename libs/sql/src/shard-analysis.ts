// Walks a parsed statement: the tables it touches, and for each sharded table reference its key constraint.
import type { DbproxyError } from '@dbproxy/util';
import { asArray, columnRef, conjuncts, isNode, markerSlot, nameOf, statementOf, str, walk, type AstNode } from './ast';
import type { TableRef } from './classification';
import { ShardKeyAssigned, ShardKeyInvalid, ShardRoutingUnsupported } from './errors';
import { deriveAll, targetFor } from './key-constraints';
import type { ShardRuleSet, ResolvedRule } from './shard-rules';
import type { InsertKeys, KeyedRef } from './shard-template';

/** What became of one sharded table reference. */
export type RefOutcome =
  | { readonly kind: 'keyed'; readonly ref: KeyedRef }
  | { readonly kind: 'missing'; readonly rule: ResolvedRule; readonly insert: boolean }
  | { readonly kind: 'open'; readonly rule: ResolvedRule; readonly why: string }
  | { readonly kind: 'reject'; readonly error: DbproxyError };

/** VALUES groups of the scan, so INSERT rows can be found on any later execution. */
export interface ValuesGroups {
  readonly slotFrom: readonly number[];
  readonly slotCount: readonly number[];
  readonly uniform: readonly boolean[];
}

export interface AstFacts {
  readonly outcomes: RefOutcome[];
  insert?: InsertKeys;
  readonly tables: TableRef[];
}

type JoinKind = 'base' | 'inner' | 'left' | 'other';

interface BlockRef {
  readonly alias: string;
  readonly table: string;
  readonly rule?: ResolvedRule;
  readonly join: JoinKind;
  readonly on: unknown;
  readonly using: readonly string[];
}

function joinKind(join: unknown): JoinKind {
  if (typeof join !== 'string') return 'base';
  const j = join.toUpperCase();
  if (j.startsWith('LEFT')) return 'left';
  if (j.startsWith('RIGHT') || j.startsWith('FULL')) return 'other';
  return 'inner';
}

/** One analysis of one statement's AST. */
export class ShardAnalysis {
  readonly facts: AstFacts = { outcomes: [], tables: [] };
  private readonly tableIndex = new Map<string, number>();

  constructor(
    private readonly rules: ShardRuleSet,
    private readonly slotCount: number,
    private readonly groups: ValuesGroups,
  ) {}

  /** `outer`: qualified conjuncts of enclosing blocks, which hold for every row a correlated sub-query sees. */
  statement(node: AstNode, ctes: ReadonlySet<string>, outer: readonly unknown[] = []): void {
    switch (node.type) {
      case 'select':
        return this.select(node, ctes, outer);
      case 'insert':
      case 'replace':
        return this.insert(node, ctes);
      case 'update':
        return this.update(node, ctes);
      case 'delete':
        return this.remove(node, ctes);
      default:
        this.nested([node], ctes);
    }
  }

  private select(node: AstNode, ctes: ReadonlySet<string>, outer: readonly unknown[]): void {
    const scope = new Set(ctes);
    for (const item of asArray(node.with)) if (isNode(item)) scope.add((nameOf(item.name) ?? '').toLowerCase());
    for (const item of asArray(node.with)) {
      const body = isNode(item) ? statementOf(item.stmt) : undefined;
      if (body !== undefined) this.statement(body, scope);
    }
    const refs = this.fromItems(node.from, scope, 'read');
    const inner = this.block(refs, node.where, outer);
    this.nested([node.columns, node.where, node.having, node.groupby, node.orderby, refs.map((r) => r.on)], scope, inner);
    if (isNode(node._next)) this.select(node._next, scope, outer);
  }

  private update(node: AstNode, ctes: ReadonlySet<string>): void {
    const targets = this.fromItems(node.table, ctes, 'write');
    const extra = this.fromItems(node.from, ctes, 'read');
    for (const item of asArray(node.set)) this.checkAssignment(item, targets);
    const inner = this.block([...targets, ...extra], node.where, []);
    this.nested([asArray(node.set).map((s) => (isNode(s) ? s.value : undefined)), node.where, node.orderby, targets.map((r) => r.on)], ctes, inner);
  }

  private remove(node: AstNode, ctes: ReadonlySet<string>): void {
    const refs = this.fromItems(node.from, ctes, 'read');
    for (const item of asArray(node.table)) {
      if (isNode(item) && typeof item.table === 'string') this.noteTable(str(item.db) ?? undefined, item.table, 'write');
    }
    const inner = this.block(refs, node.where, []);
    this.nested([node.where, node.orderby, refs.map((r) => r.on)], ctes, inner);
  }

  private insert(node: AstNode, ctes: ReadonlySet<string>): void {
    const target = asArray(node.table)[0];
    if (!isNode(target) || typeof target.table !== 'string') return;
    const schema = str(target.db) ?? undefined;
    this.noteTable(schema, target.table, 'write');
    const rule = this.resolve(schema, target.table);
    const values = node.values;
    if (rule !== undefined) {
      const ref: BlockRef = { alias: target.table, table: target.table, rule, join: 'base', on: undefined, using: [] };
      const onDuplicate = isNode(node.on_duplicate_update) ? node.on_duplicate_update.set : undefined;
      const conflict = isNode(node.conflict) && isNode(node.conflict.action) && isNode(node.conflict.action.expr) ? node.conflict.action.expr.set : undefined;
      for (const item of [...asArray(onDuplicate), ...asArray(conflict)]) this.checkAssignment(item, [ref]);
      this.insertKeys(node, rule);
    }
    const select = statementOf(values);
    if (select !== undefined && select.type === 'select') this.statement(select, ctes);
    else this.nested([isNode(values) ? values.values : undefined, node.set], ctes);
  }

  private insertKeys(node: AstNode, rule: ResolvedRule): void {
    const keyName = `${rule.display}.${rule.column}`;
    if (asArray(node.set).length > 0) {
      const item = asArray(node.set).find((s) => isNode(s) && (nameOf(s.column) ?? '').toLowerCase() === rule.column);
      const slot = isNode(item) ? markerSlot(item.value, this.slotCount) : undefined;
      if (item === undefined) return this.outcome({ kind: 'missing', rule, insert: true });
      if (slot === undefined) return this.reject(ShardKeyInvalid(keyName, 'the value is not a literal or parameter'));
      this.facts.insert = { table: rule.display, column: rule.column, map: rule.map, source: { kind: 'cells', group: -1, slots: [slot] } };
      return;
    }
    const values = node.values;
    if (!isNode(values) || values.type !== 'values') {
      return this.reject(ShardRoutingUnsupported(`INSERT ... SELECT into sharded table ${rule.display}: the shard key of each row is not known before it is read; insert with VALUES`));
    }
    const columns = asArray(node.columns).map((c) => (nameOf(c) ?? '').toLowerCase());
    if (columns.length === 0) {
      return this.reject(ShardRoutingUnsupported(`INSERT into sharded table ${rule.display} without a column list; name the columns so the shard column ${rule.column} can be found`));
    }
    const index = columns.indexOf(rule.column);
    if (index < 0) return this.outcome({ kind: 'missing', rule, insert: true });
    const slots: number[] = [];
    for (const [r, row] of asArray(values.values).entries()) {
      const slot = isNode(row) ? markerSlot(asArray(row.value)[index], this.slotCount) : undefined;
      if (slot === undefined) return this.reject(ShardKeyInvalid(keyName, `row ${r + 1} has no literal or parameter for it`));
      slots.push(slot);
    }
    const group = this.groups.slotFrom.findIndex((from, g) => slots[0] >= from && slots[0] < from + this.groups.slotCount[g]);
    const source =
      slots.length === 1 && group >= 0 && this.groups.uniform[group]
        ? ({ kind: 'group', group, slotOffset: slots[0] - this.groups.slotFrom[group] } as const)
        : ({ kind: 'cells', group, slots } as const);
    this.facts.insert = { table: rule.display, column: rule.column, map: rule.map, source };
  }

  /** Refuses statements that assign a shard column (rows would change shard). */
  private checkAssignment(item: unknown, targets: readonly BlockRef[]): void {
    if (!isNode(item)) return;
    const col = columnRef(item) ?? { qualifier: str(item.table) ?? undefined, column: nameOf(item.column) ?? '' };
    for (const ref of targets) {
      if (ref.rule === undefined || col.column.toLowerCase() !== ref.rule.column) continue;
      const q = col.qualifier?.toLowerCase();
      if (q === undefined || q === ref.alias.toLowerCase() || q === ref.table.toLowerCase()) {
        this.reject(ShardKeyAssigned(ref.rule.column, ref.rule.display));
      }
    }
  }

  private fromItems(items: unknown, ctes: ReadonlySet<string>, access: 'read' | 'write'): BlockRef[] {
    const refs: BlockRef[] = [];
    for (const item of asArray(items)) {
      if (!isNode(item)) continue;
      const alias = str(item.as) ?? undefined;
      const join = joinKind(item.join);
      const using = asArray(item.using).map((u) => (nameOf(u) ?? '').toLowerCase());
      if (typeof item.table === 'string') {
        const schema = str(item.db) ?? str(item.schema) ?? undefined;
        if (schema === undefined && ctes.has(item.table.toLowerCase())) {
          refs.push({ alias: alias ?? item.table, table: item.table, join, on: item.on, using });
          continue;
        }
        this.noteTable(schema, item.table, access);
        refs.push({ alias: alias ?? item.table, table: item.table, rule: this.resolve(schema, item.table), join, on: item.on, using });
        continue;
      }
      const sub = statementOf(item.expr);
      if (sub !== undefined) this.statement(sub, ctes);
      else this.nested([item.expr], ctes);
      refs.push({ alias: alias ?? '', table: '', join, on: item.on, using });
    }
    return refs;
  }

  /**
   * Each sharded reference of a query block gets a key constraint from the conjuncts that apply
   * to it. Returns the qualified conjuncts that hold for sub-queries of this block.
   */
  private block(refs: readonly BlockRef[], where: unknown, enclosing: readonly unknown[]): unknown[] {
    const names = new Set(refs.flatMap((r) => [r.alias.toLowerCase(), r.table.toLowerCase()]));
    const outer = enclosing.filter((c) => !namesQualifier(c, names)); // an inner alias shadows an outer one
    const shared = conjuncts(where);
    for (const ref of refs) if (ref.join === 'inner') conjuncts(ref.on, shared);
    for (const ref of refs) {
      if (ref.rule === undefined) continue;
      const applicable = [...conjuncts(where), ...outer];
      for (const other of refs) {
        if (other.join === 'inner' || (other === ref && other.join === 'left')) conjuncts(other.on, applicable);
        if (other.join !== 'other') for (const col of other.using) applicable.push(usingEquality(other.alias, col));
      }
      const target = targetFor(ref.alias, ref.table, ref.rule.column, applicable);
      const constraint = deriveAll(applicable, target, this.slotCount);
      if (constraint.k === 'absent') this.outcome({ kind: 'missing', rule: ref.rule, insert: false });
      else if (constraint.k === 'open') this.outcome({ kind: 'open', rule: ref.rule, why: constraint.why });
      else this.outcome({ kind: 'keyed', ref: { table: ref.rule.display, column: ref.rule.column, map: ref.rule.map, expr: constraint } });
    }
    return [...outer, ...shared.filter(fullyQualified)];
  }

  /** Analyzes sub-queries anywhere inside `values` as statements of their own. */
  private nested(values: readonly unknown[], ctes: ReadonlySet<string>, outer: readonly unknown[] = []): void {
    walk(values, (n) => {
      const sub = isNode(n.ast) ? n.ast : undefined;
      if (sub === undefined) return true;
      this.statement(sub, ctes, outer);
      return false;
    });
  }

  private resolve(schema: string | undefined, table: string): ResolvedRule | undefined {
    const rule = this.rules.match(schema, table);
    if (rule === 'ambiguous') {
      this.reject(ShardRoutingUnsupported(`table ${table} matches shard rules in several schemas; qualify it with its schema`));
      return undefined;
    }
    return rule;
  }

  private noteTable(schema: string | undefined, name: string, access: 'read' | 'write'): void {
    const key = `${schema ?? ''}.${name}`;
    const at = this.tableIndex.get(key);
    if (at === undefined) {
      this.tableIndex.set(key, this.facts.tables.length);
      this.facts.tables.push(schema === undefined ? { name, access } : { schema, name, access });
    } else if (access === 'write' && this.facts.tables[at].access === 'read') this.facts.tables[at] = { ...this.facts.tables[at], access };
  }

  private outcome(outcome: RefOutcome): void {
    this.facts.outcomes.push(outcome);
  }

  private reject(error: DbproxyError): void {
    this.facts.outcomes.push({ kind: 'reject', error });
  }
}

/** True when a column in the expression is qualified by one of `names`. */
function namesQualifier(expr: unknown, names: ReadonlySet<string>): boolean {
  let found = false;
  walk(expr, (n) => {
    if (n.type === 'column_ref' && typeof n.table === 'string' && names.has(n.table.toLowerCase())) found = true;
    return !found;
  });
  return found;
}

/** True when every column in the expression names its table (so it means the same inside a sub-query). */
function fullyQualified(expr: unknown): boolean {
  let qualified = true;
  walk(expr, (n) => {
    if (n.type === 'column_ref' && (typeof n.table !== 'string' || n.table === '')) qualified = false;
    return qualified && !isNode(n.ast);
  });
  return qualified;
}

/** `JOIN t USING (c)` means t.c equals the other side's c. */
function usingEquality(alias: string, column: string): AstNode {
  return {
    type: 'binary_expr',
    operator: '=',
    left: { type: 'column_ref', table: alias, column },
    right: { type: 'column_ref', table: null, column },
  };
}
