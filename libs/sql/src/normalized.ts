// Tokens of a normalized statement (a fingerprint's text), read back on a cache miss for analysis.
import { keywordText } from './keywords';
import { NormTok } from './fingerprint';
import { SqlScanner, Tok, type Dialect } from './tokenizer';
import { blockDelta, isCompoundCapable } from './compound';

/** A token of normalized text; `slot` numbers the `?`/`?+` slots in order (else -1). */
export interface NToken {
  readonly kind: number;
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** Keyword id for words, else 0. */
  readonly keyword: number;
  readonly slot: number;
  /** Parenthesis depth at the token (a `(` has the depth outside it). */
  readonly depth: number;
}

/**
 * Reads normalized text back into tokens. `slotOffsets` says where the fingerprint put its slots:
 * a `?` there is a Slot (`?+` a SlotList), any other `?` stays what the scanner reads (a
 * PostgreSQL jsonb operator), so slots are numbered exactly as the fingerprint numbered them.
 */
export function normalizedTokens(text: string, dialect: Dialect, slotOffsets: ReadonlySet<number>): NToken[] {
  const scanner = new SqlScanner(dialect);
  scanner.reset(text);
  const tokens: NToken[] = [];
  let slot = 0;
  let depth = 0;
  for (let kind: number = scanner.next(); kind !== Tok.End; kind = scanner.next()) {
    if (kind === Tok.Comment || kind === Tok.Error) continue;
    const start = scanner.start;
    let end = scanner.end;
    if (slotOffsets.has(start)) {
      if (text.charCodeAt(start + 1) === 0x2b) {
        kind = NormTok.SlotList;
        if (end === start + 1) scanner.next(); // the `+` of `?+`, when the scanner read `?` alone
        end = start + 2;
      } else {
        kind = NormTok.Slot;
        end = start + 1;
      }
    } else if (kind === Tok.Placeholder) kind = Tok.Operator; // cannot happen for text the fingerprint wrote
    if (kind === Tok.RParen && depth > 0) depth--;
    const isSlot = kind === NormTok.Slot || kind === NormTok.SlotList;
    tokens.push({ kind, start, end, text: text.slice(start, end), keyword: kind === Tok.Word ? scanner.keyword : 0, slot: isSlot ? slot++ : -1, depth });
    if (kind === Tok.LParen) depth++;
  }
  return tokens;
}

/**
 * Splits tokens at top-level semicolons into statements (empty ones dropped). In MySQL a `;`
 * inside the body of a compound statement (CREATE PROCEDURE ... BEGIN ...; END, BEGIN NOT
 * ATOMIC ...; END, IF ...; END IF) belongs to it: the server reads the whole as one statement.
 */
export function splitStatements(tokens: readonly NToken[], dialect: Dialect = 'postgresql'): NToken[][] {
  const statements: NToken[][] = [];
  let current: NToken[] = [];
  let blocks = 0;
  let compound: boolean | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.kind === Tok.Semicolon) {
      if (blocks > 0 && (compound ??= isCompoundCapable(current))) {
        current.push(token);
        continue;
      }
      if (current.length > 0) statements.push(current);
      current = [];
      blocks = 0;
      compound = undefined;
    } else {
      current.push(token);
      if (dialect === 'mysql') blocks = Math.max(0, blocks + blockDelta(tokens, i));
    }
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

/** Read-only cursor over one statement's tokens with keyword helpers. */
export class TokenCursor {
  constructor(readonly tokens: readonly NToken[]) {}

  at(i: number): NToken | undefined {
    return this.tokens[i];
  }

  kw(i: number): number {
    const t = this.tokens[i];
    return t !== undefined && t.kind === Tok.Word ? t.keyword : 0;
  }

  /** True when tokens from `i` are the given keywords in order. */
  isSeq(i: number, ...keywords: number[]): boolean {
    for (let k = 0; k < keywords.length; k++) if (this.kw(i + k) !== keywords[k]) return false;
    return true;
  }

  /** Upper-case text of a word (keyword or not), '' for other tokens. */
  word(i: number): string {
    const t = this.tokens[i];
    if (t === undefined || t.kind !== Tok.Word) return '';
    return t.keyword !== 0 ? keywordText(t.keyword) : t.text.toUpperCase();
  }

  /** Index of the `)` matching the `(` at i, or the last index when unbalanced. */
  closing(i: number): number {
    const depth = this.tokens[i].depth;
    for (let j = i + 1; j < this.tokens.length; j++) if (this.tokens[j].kind === Tok.RParen && this.tokens[j].depth === depth) return j;
    return this.tokens.length - 1;
  }

  get length(): number {
    return this.tokens.length;
  }
}

/** The unquoted name of an identifier token (words as written, quotes removed and doubled quotes undone). */
export function identifierName(token: NToken): string {
  if (token.kind !== Tok.QuotedIdent) return token.text;
  const text = token.text.startsWith('U&') ? token.text.slice(2) : token.text;
  const quote = text[0];
  return text.slice(1, -1).split(quote + quote).join(quote);
}
