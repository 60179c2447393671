// tokenize(): a whole statement as an array of tokens, for tools and tests (the hot path pulls from SqlScanner).
import { UnterminatedToken } from './errors';
import { SqlScanner, Tok, type Dialect, type TokKind } from './tokenizer';

/** One token of tokenize()'s output. */
export interface Token {
  readonly kind: TokKind;
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** Keyword id for words, else 0. */
  readonly keyword: number;
}

/**
 * Tokenizes a whole statement, comments included. Throws DBP_ERR_SQL_UNTERMINATED (and only
 * that) for an unterminated string, identifier, comment or dollar quote.
 */
export function tokenize(text: string, dialect: Dialect): Token[] {
  const scanner = new SqlScanner(dialect);
  scanner.reset(text);
  const tokens: Token[] = [];
  for (let kind = scanner.next(); kind !== Tok.End; kind = scanner.next()) {
    if (kind === Tok.Error) throw UnterminatedToken(scanner.unterminated, scanner.start);
    tokens.push({ kind, start: scanner.start, end: scanner.end, text: text.slice(scanner.start, scanner.end), keyword: scanner.keyword });
  }
  return tokens;
}
