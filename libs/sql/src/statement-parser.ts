// node-sql-parser behind a narrow door: one statement in, one AST node or a failure reason out, never a throw.
import { Parser } from 'node-sql-parser';
import { isNode, statementOf, type AstNode } from './ast';
import type { Dialect } from './tokenizer';

export type ParseOutcome =
  | { readonly ok: true; readonly ast: AstNode; readonly tableList: readonly string[] }
  | { readonly ok: false; readonly reason: string };

const DATABASE: Record<Dialect, string> = { mysql: 'MySQL', postgresql: 'PostgresQL' };

/** Wraps one node-sql-parser instance for one dialect. */
export class StatementParser {
  private readonly parser = new Parser();
  private readonly options: { database: string };

  constructor(dialect: Dialect) {
    this.options = { database: DATABASE[dialect] };
  }

  parse(text: string): ParseOutcome {
    let result: unknown;
    try {
      result = this.parser.parse(text, this.options);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { ok: false, reason: message.length > 160 ? `${message.slice(0, 157)}...` : message };
    }
    if (!isNode(result)) return { ok: false, reason: 'node-sql-parser returned nothing' };
    const asts = Array.isArray(result.ast) ? result.ast : [result.ast];
    if (asts.length !== 1) return { ok: false, reason: `node-sql-parser saw ${asts.length} statements` };
    const ast = statementOf(asts[0]) ?? (isNode(asts[0]) ? asts[0] : undefined);
    if (ast === undefined) return { ok: false, reason: 'node-sql-parser returned no statement' };
    const tableList = Array.isArray(result.tableList) ? result.tableList.filter((t): t is string => typeof t === 'string') : [];
    return { ok: true, ast, tableList };
  }
}
