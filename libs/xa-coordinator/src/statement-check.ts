// The XA path runs exactly one autocommit DML statement (spec 000): INSERT, UPDATE, DELETE or
// REPLACE, one statement (a trailing `;` allowed), no transaction control of its own.
import { Tok, tokenize } from '@dbproxy/sql';
import { XaErrors } from './errors';

const DML = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE']);

/** Throws DBP_ERR_XA_STATEMENT_NOT_ALLOWED unless `statement` is one DML statement. */
export function assertSingleDml(statement: string): void {
  let tokens;
  try {
    tokens = tokenize(statement, 'mysql').filter((t) => t.kind !== Tok.Comment);
  } catch {
    throw XaErrors.badStatement('it does not tokenize (unterminated string, identifier or comment)');
  }
  while (tokens.length > 0 && tokens[tokens.length - 1]?.kind === Tok.Semicolon) tokens.pop();
  const first = tokens[0];
  if (!first || first.kind !== Tok.Word || !DML.has(first.text.toUpperCase())) {
    throw XaErrors.badStatement(`it starts with ${first ? first.text.slice(0, 32) : 'nothing'}`);
  }
  if (tokens.some((t) => t.kind === Tok.Semicolon)) throw XaErrors.badStatement('it holds more than one statement');
}
