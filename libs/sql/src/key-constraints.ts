// Derives a sharded table's key constraint from WHERE/ON conjuncts: equality, IN, AND, OR, column equivalences.
import { asArray, columnRef, conjuncts, isNode, markerSlot, walk, type ColumnRef } from './ast';
import type { KeyExpr } from './shard-template';

/** Why a constraint is not a finite key set. */
export type OpenConstraint = { readonly k: 'open'; readonly why: string };
/** The column is not constrained at all. */
export type Absent = { readonly k: 'absent' };
export type Constraint = KeyExpr | OpenConstraint | Absent;

const ABSENT: Absent = { k: 'absent' };
const open = (why: string): OpenConstraint => ({ k: 'open', why });

const columnKey = (c: ColumnRef): string => `${(c.qualifier ?? '').toLowerCase()}.${c.column.toLowerCase()}`;

/** Column keys known equal through `a = b` conjuncts (union-find). */
class Equivalences {
  private readonly parent = new Map<string, string>();

  find(key: string): string {
    let root = key;
    while (this.parent.has(root) && this.parent.get(root) !== root) root = this.parent.get(root) as string;
    return root;
  }

  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }
}

/** The target column: `alias.column`, `table.column`, or the bare column, plus everything equated to them. */
export class TargetColumn {
  private readonly roots = new Set<string>();

  constructor(
    private readonly equivalences: Equivalences,
    keys: readonly string[],
  ) {
    for (const key of keys) this.roots.add(equivalences.find(key));
  }

  matches(node: unknown): boolean {
    const c = columnRef(node);
    return c !== undefined && this.roots.has(this.equivalences.find(columnKey(c)));
  }

  mentionedIn(node: unknown): boolean {
    let found = false;
    walk(node, (n) => {
      if (found) return false;
      if (this.matches(n)) found = true;
      return !found;
    });
    return found;
  }
}

/** Builds the target for a reference from the conjuncts that apply to it. */
export function targetFor(alias: string, table: string, column: string, applicable: readonly unknown[]): TargetColumn {
  const eq = new Equivalences();
  for (const c of applicable) {
    if (!isNode(c) || c.type !== 'binary_expr' || c.operator !== '=') continue;
    const l = columnRef(c.left);
    const r = columnRef(c.right);
    if (l !== undefined && r !== undefined) eq.union(columnKey(l), columnKey(r));
  }
  const col = column.toLowerCase();
  return new TargetColumn(eq, [`${alias.toLowerCase()}.${col}`, `${table.toLowerCase()}.${col}`, `.${col}`]);
}

const RANGE_OPERATORS = new Set(['<', '>', '<=', '>=', '<>', '!=', 'BETWEEN', 'NOT BETWEEN', 'LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE', 'IS', 'IS NOT', 'NOT IN', 'REGEXP', 'RLIKE']);

/** The constraint an expression puts on the target column. */
export function derive(expr: unknown, target: TargetColumn, slotCount: number): Constraint {
  if (!isNode(expr)) return ABSENT;
  if (expr.type === 'binary_expr') {
    const op = String(expr.operator).toUpperCase();
    if (op === 'AND') return and([derive(expr.left, target, slotCount), derive(expr.right, target, slotCount)]);
    if (op === 'OR') return or([derive(expr.left, target, slotCount), derive(expr.right, target, slotCount)]);
    if (op === '=') return equality(expr.left, expr.right, target, slotCount);
    if (op === 'IN' && target.matches(expr.left)) return inList(expr.right, slotCount);
    if (RANGE_OPERATORS.has(op) && target.mentionedIn(expr)) return open(`${op} on the shard column`);
  }
  return target.mentionedIn(expr) ? open('an expression on the shard column') : ABSENT;
}

function equality(left: unknown, right: unknown, target: TargetColumn, slotCount: number): Constraint {
  for (const [col, other] of [
    [left, right],
    [right, left],
  ]) {
    if (!target.matches(col)) continue;
    const slot = markerSlot(other, slotCount);
    if (slot !== undefined) return { k: 'values', slots: [slot] };
    if (target.matches(other)) return ABSENT; // a join equality inside the equivalence class
    return open('the shard column compared with an expression or another column');
  }
  return target.mentionedIn(left) || target.mentionedIn(right) ? open('an expression on the shard column') : ABSENT;
}

function inList(list: unknown, slotCount: number): Constraint {
  if (!isNode(list) || list.type !== 'expr_list') return open('IN with a sub-query');
  const slots: number[] = [];
  for (const item of asArray(list.value)) {
    const slot = markerSlot(item, slotCount);
    if (slot === undefined) return open('IN with values that are not literals');
    slots.push(slot);
  }
  return slots.length > 0 ? { k: 'values', slots } : open('an empty IN list');
}

/** AND: keyed parts intersect; open parts only matter when nothing is keyed. */
export function and(parts: Constraint[]): Constraint {
  const keyed = parts.filter((p): p is KeyExpr => p.k !== 'open' && p.k !== 'absent');
  if (keyed.length === 1) return keyed[0];
  if (keyed.length > 1) return { k: 'and', parts: keyed };
  return parts.find((p) => p.k === 'open') ?? ABSENT;
}

/** OR: every branch must be keyed, else the key can be anything. */
export function or(parts: Constraint[]): Constraint {
  if (parts.every((p) => p.k === 'absent')) return ABSENT;
  if (parts.some((p) => p.k === 'absent')) return open('OR with a branch that does not constrain the shard column');
  const opened = parts.find((p): p is OpenConstraint => p.k === 'open');
  if (opened !== undefined) return opened;
  return { k: 'or', parts: parts as KeyExpr[] };
}

/** The constraint of a list of conjuncts. */
export function deriveAll(applicable: readonly unknown[], target: TargetColumn, slotCount: number): Constraint {
  return and(applicable.map((c) => derive(c, target, slotCount)));
}

export { conjuncts };
