// One tokenizer pass per statement: normalized text, literal positions, IN-list/VALUES collapsing, comment tags.
import { mayCarryTags, readCommentTags } from './comments';
import { keywordId, Kw } from './keywords';
import { StatementScan } from './statement-scan';
import { SqlScanner, Tok, type Dialect } from './tokenizer';

export { StatementScan };

/** Kinds of normalized tokens: the tokenizer's, plus the `?` and `?+` slots that replace literals. */
export const NormTok = { ...Tok, Slot: 20, SlotList: 21 } as const;

// Module-local copies of the kinds the per-token loop tests: plain constants, whatever the compiler
// does with imported bindings.
const END = Tok.End;
const WORD = Tok.Word;
const QUOTED = Tok.QuotedIdent;
const STRING = Tok.String;
const PLACEHOLDER = Tok.Placeholder;
const OPERATOR = Tok.Operator;
const LPAREN = Tok.LParen;
const RPAREN = Tok.RParen;
const COMMA = Tok.Comma;
const SEMICOLON = Tok.Semicolon;
const DOT = Tok.Dot;
const VARIABLE = Tok.Variable;
const LBRACKET = Tok.LBracket;
const QUALIFIED = Tok.QualifiedName;
const RBRACKET = Tok.RBracket;
const COMMENT = Tok.Comment;
const ERROR = Tok.Error;
const SLOT = NormTok.Slot;
const SLOT_LIST = NormTok.SlotList;
const KW_IN = Kw.IN;
const KW_VALUES = Kw.VALUES;
const KW_VALUE = Kw.VALUE;

/** SPACE_BEFORE[prev * 32 + kind]: 1 when one space separates the two tokens (prev a non-keyword word for LPAREN is handled apart). */
const SPACE_BEFORE = new Uint8Array(32 * 32);
for (let prev = 0; prev < 32; prev++) {
  for (let kind = 0; kind < 32; kind++) {
    const glued =
      prev === LPAREN || prev === LBRACKET || prev === DOT || kind === RPAREN || kind === RBRACKET || kind === COMMA || kind === SEMICOLON ||
      (kind === DOT && prev !== VARIABLE) || // `@@x .` stays apart: `@@x.` would read back as one variable
      (kind === LPAREN && (prev === QUOTED || prev === QUALIFIED)) ||
      (kind === LBRACKET && (prev === QUOTED || prev === QUALIFIED || prev === WORD || prev === RPAREN || prev === RBRACKET || prev === SLOT));
    SPACE_BEFORE[prev * 32 + kind] = glued ? 0 : 1;
  }
}

const isDigitCode = (c: number): boolean => c >= 0x30 && c <= 0x39;

const ROWS_NONE = 0;
const ROWS_IN_ROW = 1;
const ROWS_AFTER_ROW = 2;
const ROWS_EXPECT_ROW = 3;

const isLiteralKind = (kind: number): boolean => kind >= STRING && kind <= PLACEHOLDER;

/** Computes fingerprints; one instance per router, reused for every statement. */
export class Fingerprinter {
  readonly scan = new StatementScan();
  private readonly scanner: SqlScanner;
  private readonly wordFold: 0 | 2;
  private depth = 0;
  private questionMarks = 0;
  private statementHasTokens = false;
  /** Kind and keyword of the last emitted token (-1: none yet). */
  private prevKind = -1;
  private prevKeyword = 0;
  /** Where the trailing `;` starts in `out`, or -1 when the last token is not a `;`. */
  private semicolonAt = -1;
  private semicolonHash = 0;
  private listDepth = -1;
  private listExpectSlot = false;
  private listOut = 0;
  private listHash = 0;
  private listSlot = 0;
  private listRaw = 0;
  private rowsState = ROWS_NONE;
  private rowsDepth = 0;
  private rowsBase = 0;
  private rowZeroHash = 0;

  constructor(readonly dialect: Dialect) {
    this.scanner = new SqlScanner(dialect, true);
    this.wordFold = dialect === 'postgresql' ? 2 : 0; // PostgreSQL folds unquoted names to lower case
  }

  run(text: string): StatementScan {
    const scan = this.scan;
    const scanner = this.scanner;
    scan.reset(text);
    scanner.reset(text);
    this.depth = 0;
    this.questionMarks = 0;
    this.statementHasTokens = false;
    this.prevKind = -1;
    this.prevKeyword = 0;
    this.semicolonAt = -1;
    this.listDepth = -1;
    this.rowsState = ROWS_NONE;
    for (let kind: number = scanner.next(); kind !== END; kind = scanner.next()) {
      if (kind === COMMENT) {
        if (mayCarryTags(text, scanner.start, scanner.end)) readCommentTags(text, scanner.start, scanner.end, scan.comments);
        continue;
      }
      if (kind === ERROR) {
        scan.unterminated = scanner.unterminated;
        scan.unterminatedAt = scanner.start;
        this.emitText(OPERATOR, `<unterminated ${scanner.unterminated}>`);
        break;
      }
      this.token(kind);
    }
    this.finish();
    return scan;
  }

  private token(kind: number): void {
    if (this.rowsState >= ROWS_AFTER_ROW) {
      if (this.rowsState === ROWS_AFTER_ROW && kind === COMMA) this.rowsState = ROWS_EXPECT_ROW;
      else if (!(this.rowsState === ROWS_EXPECT_ROW && kind === LPAREN && this.depth === this.rowsDepth)) this.finishRows();
    }
    if (this.listDepth === this.depth) this.followList(kind);
    if (isLiteralKind(kind)) this.literal(kind);
    else if (kind === WORD) {
      const keyword = this.scanner.keyword;
      // A word after `.` is a name part, never a keyword (as in a dotted name read in one token).
      this.emitSource(kind, this.prevKind === DOT ? 0 : keyword, keyword !== 0 ? 1 : this.wordFold);
    } else if (kind === LPAREN) this.openParen();
    else if (kind === RPAREN) this.closeParen();
    else if (kind === SEMICOLON) this.semicolon();
    else if (kind === QUALIFIED && (this.wordFold === 2 || this.scanner.keywordPart)) this.emitName();
    else this.emitSource(kind, 0, 0);
  }

  private literal(kind: number): void {
    const scan = this.scan;
    const scanner = this.scanner;
    let info = kind;
    if (kind === PLACEHOLDER) {
      const param = scanner.text.charCodeAt(scanner.start) === 0x3f ? this.questionMarks++ : parsePlaceholderIndex(scanner.text, scanner.start, scanner.end);
      info |= (param + 1) << 5;
    }
    const raw = scan.rawInfo.length;
    scan.slotFrom.push(raw);
    scan.slotTo.push(raw + 1);
    scan.rawInfo.push(info);
    scan.rawStart.push(scanner.start);
    scan.rawEnd.push(scanner.end);
    this.emitText(SLOT, '?');
    scan.slotOut.push(scan.out.length - 1);
  }

  private openParen(): void {
    const scan = this.scan;
    const prevKeyword = this.prevKind === WORD ? this.prevKeyword : 0;
    const rowsStart = this.rowsState === ROWS_EXPECT_ROW || (this.rowsState === ROWS_NONE && (prevKeyword === KW_VALUES || prevKeyword === KW_VALUE));
    if (rowsStart && this.rowsState === ROWS_NONE) {
      this.rowsDepth = this.depth;
      this.rowsBase = scan.rowSrcStart.length;
    }
    this.emitSource(LPAREN, 0, 0);
    if (rowsStart) this.startRow();
    this.depth++;
    if (prevKeyword === KW_IN) {
      this.listDepth = this.depth;
      this.listExpectSlot = true;
      this.listOut = scan.out.length;
      this.listHash = scan.out.hash;
      this.listSlot = scan.slotFrom.length;
      this.listRaw = scan.rawInfo.length;
    }
  }

  private closeParen(): void {
    const scan = this.scan;
    if (this.listDepth === this.depth) {
      // Every element was a literal: the whole list becomes one `?+` slot.
      this.listDepth = -1;
      scan.out.rewind(this.listOut, this.listHash);
      scan.slotFrom.length = scan.slotTo.length = scan.slotOut.length = this.listSlot;
      scan.slotFrom.push(this.listRaw);
      scan.slotTo.push(scan.rawInfo.length);
      this.prevKind = LPAREN;
      this.emitText(SLOT_LIST, '?+');
      scan.slotOut.push(scan.out.length - 2);
    }
    if (this.depth > 0) this.depth--;
    this.emitSource(RPAREN, 0, 0);
    if (this.rowsState === ROWS_IN_ROW && this.depth === this.rowsDepth) this.endRow();
  }

  /** Keeps or abandons a candidate IN-list: only `literal (, literal)*` collapses. */
  private followList(kind: number): void {
    if (isLiteralKind(kind) && this.listExpectSlot) this.listExpectSlot = false;
    else if (kind === COMMA && !this.listExpectSlot) this.listExpectSlot = true;
    else if (!(kind === RPAREN && !this.listExpectSlot)) this.listDepth = -1;
  }

  private semicolon(): void {
    if (this.rowsState !== ROWS_NONE) this.finishRows();
    this.listDepth = -1;
    this.depth = 0;
    if (!this.statementHasTokens) return; // empty statements vanish
    this.scan.statementCount++;
    const out = this.scan.out;
    this.semicolonAt = out.length;
    this.semicolonHash = out.hash;
    this.emitSource(SEMICOLON, 0, 0);
    this.statementHasTokens = false;
  }

  private startRow(): void {
    const scan = this.scan;
    this.rowsState = ROWS_IN_ROW;
    scan.rowSrcStart.push(this.scanner.start);
    scan.rowOutStart.push(scan.out.length - 1); // the row's `(`, just emitted
    scan.rowSlot.push(scan.slotFrom.length);
    scan.rowRaw.push(scan.rawInfo.length);
  }

  private endRow(): void {
    const scan = this.scan;
    this.rowsState = ROWS_AFTER_ROW;
    scan.rowSrcEnd.push(this.scanner.end);
    scan.rowOutEnd.push(scan.out.length);
    scan.rowSlotEnd.push(scan.slotFrom.length);
    scan.rowRawEnd.push(scan.rawInfo.length);
    if (scan.rowRawEnd.length - 1 === this.rowsBase) {
      this.rowZeroHash = scan.out.hash;
    }
  }

  /** Closes a VALUES group; identical rows collapse to the first. */
  private finishRows(): void {
    const scan = this.scan;
    const base = this.rowsBase;
    this.rowsState = ROWS_NONE;
    const rows = scan.rowSrcEnd.length - base;
    scan.rowSrcStart.length = scan.rowOutStart.length = scan.rowSlot.length = scan.rowRaw.length = base + rows;
    if (rows === 0) return;
    const outStart = scan.rowOutStart.data;
    const outEnd = scan.rowOutEnd.data;
    const width = outEnd[base] - outStart[base];
    const rawPerRow = scan.rowRawEnd.data[base] - scan.rowRaw.data[base];
    const slotsPerRow = scan.rowSlotEnd.data[base] - scan.rowSlot.data[base];
    let same = true;
    for (let r = base + 1; r < base + rows && same; r++) {
      same =
        outEnd[r] - outStart[r] === width &&
        scan.rowRawEnd.data[r] - scan.rowRaw.data[r] === rawPerRow &&
        scan.rowSlotEnd.data[r] - scan.rowSlot.data[r] === slotsPerRow &&
        scan.out.same(outStart[base], outStart[r], width);
    }
    if (same && rows > 1) {
      scan.out.rewind(outEnd[base], this.rowZeroHash);
      scan.slotFrom.length = scan.slotTo.length = scan.slotOut.length = scan.rowSlotEnd.data[base];
      this.prevKind = RPAREN;
    }
    scan.groupSlotFrom.push(scan.rowSlot.data[base]);
    scan.groupSlotCount.push(slotsPerRow);
    scan.groupRawFrom.push(scan.rowRaw.data[base]);
    scan.groupRawPerRow.push(same ? rawPerRow : -1);
    scan.groupRows.push(rows);
    scan.groupRowBase.push(base);
  }

  private finish(): void {
    const scan = this.scan;
    if (this.rowsState === ROWS_IN_ROW) {
      // Unbalanced row at the end: drop it from the group bookkeeping.
      const ended = scan.rowSrcEnd.length;
      scan.rowSrcStart.length = scan.rowOutStart.length = scan.rowSlot.length = scan.rowRaw.length = ended;
      this.rowsState = ended > this.rowsBase ? ROWS_AFTER_ROW : ROWS_NONE;
    }
    if (this.rowsState !== ROWS_NONE) this.finishRows();
    if (this.statementHasTokens) scan.statementCount++;
    if (this.semicolonAt >= 0 && this.prevKind === SEMICOLON) scan.out.rewind(this.semicolonAt, this.semicolonHash);
  }

  private emitSource(kind: number, keyword: number, fold: 0 | 1 | 2): void {
    this.space(kind);
    // `. 1a` stays apart: `.1a` would read back as a number and a word.
    if (this.prevKind === DOT && isDigitCode(this.scanner.text.charCodeAt(this.scanner.start))) this.scan.out.appendCode(0x20);
    this.scan.out.append(this.scanner.text, this.scanner.start, this.scanner.end, fold);
    this.prevKind = kind;
    this.prevKeyword = keyword;
    this.statementHasTokens = true;
  }

  /**
   * A dotted name folded part by part exactly as separate tokens would be: quoted parts as they
   * are, keyword parts upper case, other unquoted parts lower case in PostgreSQL.
   */
  private emitName(): void {
    this.space(QUALIFIED);
    const { text, start, end } = this.scanner;
    const out = this.scan.out;
    if (!this.scanner.keywordPart) out.appendName(text, start, end);
    else {
      let from = start;
      for (let i = start; i <= end; i++) {
        const c = i < end ? text.charCodeAt(i) : 0x2e;
        if (c === 0x22 || c === 0x60) {
          const close = text.indexOf(String.fromCharCode(c), i + 1);
          i = close < 0 || close >= end ? end - 1 : close; // doubled quotes re-enter the loop harmlessly
          continue;
        }
        if (c !== 0x2e) continue;
        const quoted = text.charCodeAt(from) === 0x22 || text.charCodeAt(from) === 0x60;
        out.append(text, from, i, quoted ? 0 : keywordId(text, from, i) !== 0 ? 1 : this.wordFold);
        if (i < end) out.appendCode(0x2e);
        from = i + 1;
      }
    }
    this.prevKind = QUALIFIED;
    this.prevKeyword = 0;
    this.statementHasTokens = true;
  }

  private emitText(kind: number, text: string): void {
    this.space(kind);
    if (text.length === 1) this.scan.out.appendCode(text.charCodeAt(0));
    else this.scan.out.append(text, 0, text.length, 0);
    this.prevKind = kind;
    this.prevKeyword = 0;
    this.statementHasTokens = true;
  }

  /** One space between tokens, except inside brackets, before , ; . ) and after a name before ( or [. */
  private space(kind: number): void {
    const prev = this.prevKind;
    if (prev < 0 || SPACE_BEFORE[prev * 32 + kind] === 0) return;
    if (kind === LPAREN && prev === WORD && this.prevKeyword === 0) return; // f(x), t(a, b)
    this.scan.out.appendCode(0x20);
  }
}

/** `$12` -> 11; an absurdly large number is clamped so it simply has no bound value. */
function parsePlaceholderIndex(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start + 1; i < end && n < 1e8; i++) n = n * 10 + (text.charCodeAt(i) - 0x30);
  return n - 1;
}
