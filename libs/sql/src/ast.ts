// Narrow, defensive readers for node-sql-parser's untyped AST: names, column refs, slot markers, sub-queries.
import { STRING_MARKER } from './probe';

/** An AST object node as node-sql-parser returns it. */
export type AstNode = { readonly [key: string]: unknown };

export const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A name that may be a string or `{ type, value }` / `{ expr: { value } }`. */
export function nameOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (!isNode(v)) return undefined;
  if (typeof v.value === 'string') return v.value;
  if (isNode(v.expr)) return nameOf(v.expr);
  return undefined;
}

/** A column reference: `{ type: 'column_ref', table, column }`. */
export interface ColumnRef {
  readonly qualifier: string | undefined;
  readonly column: string;
}

export function columnRef(node: unknown): ColumnRef | undefined {
  if (!isNode(node) || node.type !== 'column_ref') return undefined;
  const column = nameOf(node.column);
  if (column === undefined || column === '*') return undefined;
  return { qualifier: str(node.table) ?? undefined, column };
}

/** Peels casts (`x::int`, CAST(x AS ...)) and parentheses off an expression. */
export function unwrap(node: unknown): unknown {
  let current = node;
  for (let guard = 0; guard < 16 && isNode(current); guard++) {
    if (current.type === 'cast' && current.expr !== undefined) current = current.expr;
    else break;
  }
  return current;
}

/** The slot a literal marker stands for, or undefined when `node` is not a marker. */
export function markerSlot(node: unknown, slotCount: number): number | undefined {
  const n = unwrap(node);
  if (!isNode(n)) return undefined;
  if (n.type === 'number' && typeof n.value === 'number' && Number.isInteger(n.value) && n.value >= 1 && n.value <= slotCount) {
    return n.value - 1;
  }
  if (typeof n.value === 'string') {
    const m = STRING_MARKER.exec(n.value);
    if (m !== null && Number(m[1]) < slotCount) return Number(m[1]);
  }
  return undefined;
}

/** The statement inside a sub-query wrapper (`{ ast }`) or the node itself when it is a statement. */
export function statementOf(node: unknown): AstNode | undefined {
  if (!isNode(node)) return undefined;
  if (isNode(node.ast)) return node.ast;
  const type = node.type;
  if (type === 'select' || type === 'insert' || type === 'replace' || type === 'update' || type === 'delete') return node;
  return undefined;
}

/** Visits every object reachable from `node` (arrays included), calling `visit`; stops descending where it returns false. */
export function walk(node: unknown, visit: (n: AstNode) => boolean, depth = 0): void {
  if (depth > 200) return;
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit, depth + 1);
    return;
  }
  if (!isNode(node)) return;
  if (!visit(node)) return;
  for (const key of Object.keys(node)) {
    const value = node[key];
    if (typeof value === 'object' && value !== null) walk(value, visit, depth + 1);
  }
}

/** Splits an expression into its top-level AND conjuncts. */
export function conjuncts(expr: unknown, out: unknown[] = []): unknown[] {
  if (isNode(expr) && expr.type === 'binary_expr' && String(expr.operator).toUpperCase() === 'AND') {
    conjuncts(expr.left, out);
    conjuncts(expr.right, out);
  } else if (expr !== null && expr !== undefined) out.push(expr);
  return out;
}
