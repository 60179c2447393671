// Several statements in one simple Query: each is routed on its own so that the unit goes where
// the most demanding of them must (a replica only when every one is a replica-safe read), pins as
// they would one by one, and the backend runs the text as sent, with PostgreSQL's implicit
// transaction around it.
import { Tok, tokenize, type SqlRoute, type SqlRouter } from '@dbproxy/sql';

/** The routes of a simple query's statements: its own route when it holds one, or its text cannot be split. */
export function statementRoutes(router: SqlRouter, sql: string, whole: SqlRoute): SqlRoute[] {
  if (whole.classification.statementCount <= 1) return [whole];
  const texts = splitStatements(sql);
  if (texts === undefined || texts.length <= 1) return [whole];
  return texts.map((text) => router.route(text));
}

/** The statement texts at top-level semicolons (inside strings, identifiers, comments and dollar quotes they do not count). */
export function splitStatements(sql: string): string[] | undefined {
  let tokens;
  try {
    tokens = tokenize(sql, 'postgresql');
  } catch {
    return undefined; // unterminated: the whole text is routed as one (primary) and the backend answers it
  }
  const texts: string[] = [];
  let start = 0;
  let depth = 0;
  let code = false; // the statement has a token that is not a comment
  for (const token of tokens) {
    if (token.kind === Tok.Semicolon && depth === 0) {
      if (code) texts.push(sql.slice(start, token.start));
      start = token.end;
      code = false;
      continue;
    }
    if (token.kind === Tok.LParen) depth++;
    else if (token.kind === Tok.RParen) depth = Math.max(0, depth - 1);
    if (token.kind !== Tok.Comment) code = true;
  }
  if (code) texts.push(sql.slice(start));
  return texts;
}
