// The SQL tokenizer for the MySQL and PostgreSQL dialects: a pull scanner over char codes, linear, allocation-free.
import { hashUpper, isExpressionPrefix, keywordId, keywordIdForHash } from './keywords';
import { blockCommentEnd, dollarBodyEnd, isDigit, isHex, isIdPart, isIdStart, isSpace, operatorEnd, quotedEnd } from './lexemes';

export type Dialect = 'mysql' | 'postgresql';

/** Token kinds returned by SqlScanner.next(). */
const Tok = {
  End: 0,
  /** Unquoted identifier or keyword (`keyword` holds the keyword id or 0). */
  Word: 1,
  /** `name` (MySQL) or "name" / U&"name" (PostgreSQL). */
  QuotedIdent: 2,
  /** '...', MySQL "...", N'...', E'...', U&'...', $tag$...$tag$. */
  String: 3,
  /** Integer, decimal or float, possibly signed: 42, -1.5, .5e3. */
  Number: 4,
  /** 0x1F, X'1F'. */
  HexNumber: 5,
  /** 0b101, B'101'. */
  BitString: 6,
  /** ? or $1. */
  Placeholder: 7,
  /** MySQL @user_var, @@system_var, @@session.var, @'quoted'. */
  Variable: 8,
  Operator: 9,
  LParen: 10,
  RParen: 11,
  Comma: 12,
  Semicolon: 13,
  Dot: 14,
  LBracket: 15,
  RBracket: 16,
  /** A comment other than a MySQL executable comment's markers (those are skipped). */
  Comment: 17,
  /** With compoundNames: `a.b`, `schema`.`t`.`c`, "s".t... read as one token. */
  QualifiedName: 19,
  /** Unterminated string, identifier, comment or dollar quote; `start` is where it began. */
  Error: 18,
} as const;
export { Tok }; // exported apart, so compiled code refers to the local binding in the hot loop
export type TokKind = (typeof Tok)[keyof typeof Tok];

/** What an Error token failed to terminate. */
export type UnterminatedKind = 'string' | 'quoted identifier' | 'comment' | 'dollar-quoted string';

/**
 * Pull scanner: call next() until it returns Tok.End. After each call `kind`, `start`, `end`
 * (and `keyword` for words) describe the token. Never throws; malformed input yields Tok.Error.
 */
export class SqlScanner {
  text = '';
  kind: TokKind = Tok.End;
  start = 0;
  end = 0;
  /** Keyword id of the current Word token, else 0. */
  keyword = 0;
  /** For Tok.Error: what was left open. */
  unterminated: UnterminatedKind = 'string';
  /** For Tok.QualifiedName: an unquoted part spells a keyword (`t.key`), so it needs per-part folding. */
  keywordPart = false;
  private pos = 0;
  private len = 0;
  private readonly mysql: boolean;
  private prevOperand = false;
  /** Inside a MySQL executable comment `/*! ... *\/`, whose content is SQL. */
  private inExecutable = false;
  private readonly identQuote: number;

  /** `compoundNames`: read dotted names as one QualifiedName token (the fingerprint's fast path). */
  constructor(
    readonly dialect: Dialect,
    private readonly compoundNames = false,
  ) {
    this.mysql = dialect === 'mysql';
    this.identQuote = this.mysql ? 0x60 : 0x22;
  }

  reset(text: string): void {
    this.text = text;
    this.len = text.length;
    this.pos = 0;
    this.kind = Tok.End;
    this.start = 0;
    this.end = 0;
    this.keyword = 0;
    this.prevOperand = false;
    this.inExecutable = false;
  }

  next(): TokKind {
    const kind = this.scan();
    this.kind = kind;
    this.end = this.pos;
    if (kind !== Tok.Comment) {
      this.prevOperand =
        kind === Tok.Word
          ? !isExpressionPrefix(this.keyword)
          : kind <= Tok.Variable || kind === Tok.RParen || kind === Tok.RBracket || kind === Tok.QualifiedName;
    }
    return kind;
  }

  private scan(): TokKind {
    const text = this.text;
    this.keyword = 0;
    for (;;) {
      let pos = this.pos;
      while (pos < this.len && isSpace(text.charCodeAt(pos))) pos++;
      this.pos = pos;
      this.start = pos;
      if (pos >= this.len) return Tok.End;
      const c = text.charCodeAt(pos);
      if (c === 0x2a && this.inExecutable && text.charCodeAt(this.pos + 1) === 0x2f) {
        this.pos += 2; // closing */ of an executable comment
        this.inExecutable = false;
        continue;
      }
      if (c === 0x2f && text.charCodeAt(this.pos + 1) === 0x2a) {
        if (this.mysql && this.openExecutable()) continue;
        return this.blockComment();
      }
      return this.scanToken(c);
    }
  }

  private scanToken(c: number): TokKind {
    switch (c) {
      case 0x27: // '
        return this.quoted(this.pos, 0x27, this.mysql, Tok.String);
      case 0x22: // "
        return this.mysql ? this.quoted(this.pos, 0x22, true, Tok.String) : this.name(this.quoted(this.pos, 0x22, false, Tok.QuotedIdent));
      case 0x60: // `
        return this.mysql ? this.name(this.quoted(this.pos, 0x60, false, Tok.QuotedIdent)) : this.operator();
      case 0x28: return this.single(Tok.LParen);
      case 0x29: return this.single(Tok.RParen);
      case 0x2c: return this.single(Tok.Comma);
      case 0x3b: return this.single(Tok.Semicolon);
      case 0x5b: return this.single(Tok.LBracket);
      case 0x5d: return this.single(Tok.RBracket);
      case 0x2e: // .
        return isDigit(this.text.charCodeAt(this.pos + 1)) && !this.prevOperand ? this.number(this.pos) : this.single(Tok.Dot);
      case 0x23: // #
        return this.mysql ? this.lineComment() : this.operator();
      case 0x2d: // -
        if (this.text.charCodeAt(this.pos + 1) === 0x2d && this.dashDashComment()) return this.lineComment();
        return this.signOrOperator();
      case 0x2b: // +
        return this.signOrOperator();
      case 0x3f: // ?
        return this.questionMark();
      case 0x24: // $
        return this.dollar();
      case 0x40: // @
        return this.mysql ? this.variable() : this.operator();
      default:
        if (isDigit(c)) return this.number(this.pos);
        if (isIdStart(c)) return this.wordOrPrefixedString(c);
        return this.operator();
    }
  }

  private single(kind: TokKind): TokKind {
    this.pos++;
    return kind;
  }

  /** A quoted token from `from` (the opening quote). Backslash escapes when `backslash`. */
  private quoted(from: number, quote: number, backslash: boolean, kind: TokKind): TokKind {
    const end = quotedEnd(this.text, from, this.len, quote, backslash);
    if (end < 0) return this.fail(kind === Tok.QuotedIdent ? 'quoted identifier' : 'string');
    this.pos = end;
    return kind;
  }

  private fail(what: UnterminatedKind): TokKind {
    this.unterminated = what;
    this.pos = this.len;
    return Tok.Error;
  }

  /** MySQL `--` starts a comment only before whitespace, a control character or the end. */
  private dashDashComment(): boolean {
    if (!this.mysql) return true;
    const after = this.text.charCodeAt(this.pos + 2);
    return Number.isNaN(after) || after <= 0x20;
  }

  private lineComment(): TokKind {
    const text = this.text;
    let i = this.pos;
    while (i < this.len && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    this.pos = i;
    return Tok.Comment;
  }

  /** Enters a MySQL `/*!12345 ... *\/` or MariaDB `/*M!123456 ... *\/` executable comment. */
  private openExecutable(): boolean {
    const text = this.text;
    let i = this.pos + 2;
    if (text.charCodeAt(i) === 0x4d && text.charCodeAt(i + 1) === 0x21) i += 2; // M!
    else if (text.charCodeAt(i) === 0x21) i += 1; // !
    else return false;
    if (this.inExecutable) return false; // MySQL does not nest them; treat as an ordinary comment
    while (i < this.len && isDigit(text.charCodeAt(i))) i++;
    this.pos = i;
    this.inExecutable = true;
    return true;
  }

  /** A block comment; PostgreSQL nests them, MySQL does not. */
  private blockComment(): TokKind {
    const end = blockCommentEnd(this.text, this.pos, this.len, !this.mysql);
    if (end < 0) return this.fail('comment');
    this.pos = end;
    return Tok.Comment;
  }

  /** `-`/`+` before a number where no operand precedes is part of a signed literal. */
  private signOrOperator(): TokKind {
    if (!this.prevOperand) {
      const text = this.text;
      let i = this.pos + 1;
      while (i < this.len && isSpace(text.charCodeAt(i))) i++;
      const c = text.charCodeAt(i);
      if (isDigit(c) || (c === 0x2e && isDigit(text.charCodeAt(i + 1)))) return this.number(i);
    }
    return this.operator();
  }

  /** Digits, fraction, exponent; 0x / 0b prefixes; MySQL words that start with digits. */
  private number(from: number): TokKind {
    const text = this.text;
    let i = from;
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1) | 0x20;
    if (c0 === 0x30 && (c1 === 0x78 || c1 === 0x62)) {
      const hex = c1 === 0x78;
      let j = i + 2;
      while (j < this.len && (hex ? isHex(text.charCodeAt(j)) : text.charCodeAt(j) === 0x30 || text.charCodeAt(j) === 0x31)) j++;
      if (j > i + 2 && !isIdPart(text.charCodeAt(j))) {
        this.pos = j;
        return hex ? Tok.HexNumber : Tok.BitString;
      }
    }
    while (i < this.len && (isDigit(text.charCodeAt(i)) || (!this.mysql && text.charCodeAt(i) === 0x5f))) i++;
    if (text.charCodeAt(i) === 0x2e && !(text.charCodeAt(i + 1) === 0x2e)) {
      i++;
      while (i < this.len && isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i) | 0x20;
    if (e === 0x65) {
      let j = i + 1;
      const sign = text.charCodeAt(j);
      if (sign === 0x2b || sign === 0x2d) j++;
      if (isDigit(text.charCodeAt(j))) {
        while (j < this.len && isDigit(text.charCodeAt(j))) j++;
        i = j;
      }
    }
    if (from === this.start && i < this.len && isIdPart(text.charCodeAt(i)) && !this.hasFraction(from, i)) {
      this.pos = i;
      return this.wordTail(); // 1abc is an identifier in MySQL (and junk PostgreSQL rejects anyway)
    }
    this.pos = i;
    return Tok.Number;
  }

  private hasFraction(from: number, to: number): boolean {
    for (let i = from; i < to; i++) if (!isDigit(this.text.charCodeAt(i))) return true;
    return false;
  }

  /** Finishes a word, hashing it on the way for the keyword lookup. */
  private wordTail(): TokKind {
    const text = this.text;
    let h = hashUpper(text, this.start, this.pos);
    let i = this.pos;
    for (; i < this.len; i++) {
      let c = text.charCodeAt(i);
      if (!isIdPart(c)) break;
      if (c >= 0x61 && c <= 0x7a) c -= 0x20;
      h = Math.imul(h ^ c, 0x01000193);
    }
    this.pos = i;
    this.keyword = keywordIdForHash(h, text, this.start, i);
    return this.compoundNames && text.charCodeAt(i) === 0x2e ? this.name(Tok.Word) : Tok.Word;
  }

  /** With compoundNames, extends a name over `.part` continuations; otherwise returns `kind`. */
  private name(kind: TokKind): TokKind {
    if (!this.compoundNames || kind === Tok.Error) return kind;
    const text = this.text;
    let extended = false;
    let keywordPart = this.keyword !== 0;
    while (text.charCodeAt(this.pos) === 0x2e) {
      const next = this.pos + 1;
      const c = text.charCodeAt(next);
      let end = next;
      if (c === this.identQuote) {
        for (end = next + 1; end < this.len; end++) {
          if (text.charCodeAt(end) !== c) continue;
          if (text.charCodeAt(end + 1) !== c) break;
          end++;
        }
        if (end >= this.len) break; // unterminated: let the next scan report it
        end++;
      } else if (isIdStart(c)) {
        while (end < this.len && isIdPart(text.charCodeAt(end))) end++;
        if (!keywordPart) keywordPart = keywordId(text, next, end) !== 0;
      } else break;
      this.pos = end;
      extended = true;
    }
    if (!extended) return kind;
    this.keyword = 0;
    this.keywordPart = keywordPart;
    return Tok.QualifiedName;
  }

  /** A word, or a prefixed literal: X'..', B'..', N'..', E'..', U&'..', U&"..". */
  private wordOrPrefixedString(c: number): TokKind {
    const text = this.text;
    const next = text.charCodeAt(this.pos + 1);
    const upper = c & ~0x20;
    if (next === 0x27) {
      if (upper === 0x58) return this.quoted(this.pos + 1, 0x27, false, Tok.HexNumber); // X'1F'
      if (upper === 0x42) return this.quoted(this.pos + 1, 0x27, false, Tok.BitString); // B'101'
      if (upper === 0x4e) return this.quoted(this.pos + 1, 0x27, this.mysql, Tok.String); // N'..'
      if (upper === 0x45 && !this.mysql) return this.quoted(this.pos + 1, 0x27, true, Tok.String); // E'..'
    }
    if (upper === 0x55 && next === 0x26 && !this.mysql) {
      const q = text.charCodeAt(this.pos + 2);
      if (q === 0x27) return this.quoted(this.pos + 2, 0x27, false, Tok.String);
      if (q === 0x22) return this.quoted(this.pos + 2, 0x22, false, Tok.QuotedIdent);
    }
    this.pos++;
    return this.wordTail();
  }

  /** `?` is a placeholder, except PostgreSQL's jsonb operators `?`, `?|`, `?&` after an operand. */
  private questionMark(): TokKind {
    if (!this.mysql && this.prevOperand) return this.operator();
    this.pos++;
    return Tok.Placeholder;
  }

  /** `$1` placeholders; PostgreSQL `$tag$...$tag$` strings; otherwise part of a word or operator. */
  private dollar(): TokKind {
    const text = this.text;
    let i = this.pos + 1;
    if (isDigit(text.charCodeAt(i))) {
      while (i < this.len && isDigit(text.charCodeAt(i))) i++;
      this.pos = i;
      return Tok.Placeholder;
    }
    if (this.mysql) {
      this.pos++;
      return this.wordTail();
    }
    if (text.charCodeAt(i) !== 0x24) {
      if (!isIdStart(text.charCodeAt(i))) return this.operator();
      while (i < this.len && isIdPart(text.charCodeAt(i)) && text.charCodeAt(i) !== 0x24) i++;
      if (text.charCodeAt(i) !== 0x24) return this.operator();
    }
    return this.dollarBody(this.pos, i + 1);
  }

  private dollarBody(tagStart: number, bodyStart: number): TokKind {
    const end = dollarBodyEnd(this.text, tagStart, bodyStart, this.len);
    if (end < 0) return this.fail('dollar-quoted string');
    this.pos = end;
    return Tok.String;
  }

  /** MySQL `@name`, `@'quoted'`, `@@name`, `@@session.name`. */
  private variable(): TokKind {
    const text = this.text;
    let i = this.pos + 1;
    const system = text.charCodeAt(i) === 0x40;
    if (system) i++;
    const q = text.charCodeAt(i);
    if (q === 0x27 || q === 0x22 || q === 0x60) return this.quoted(i, q, q !== 0x60, Tok.Variable);
    while (i < this.len && (isIdPart(text.charCodeAt(i)) || (system && text.charCodeAt(i) === 0x2e))) i++;
    this.pos = i;
    return Tok.Variable;
  }

  private operator(): TokKind {
    this.pos = operatorEnd(this.text, this.pos, this.len);
    return Tok.Operator;
  }
}
