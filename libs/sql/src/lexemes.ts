// Character classes and the scans of whole lexemes (quoted text, comments, dollar quotes, operators) the tokenizer uses.

const C_ID_START = 1;
const C_ID_PART = 2;
const C_DIGIT = 4;
const C_SPACE = 8;
const C_HEX = 16;
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_]/.test(ch)) CLASS[c] |= C_ID_START | C_ID_PART;
  if (/[0-9]/.test(ch)) CLASS[c] |= C_DIGIT | C_ID_PART;
  if (/[0-9A-Fa-f]/.test(ch)) CLASS[c] |= C_HEX;
  if (ch === '$') CLASS[c] |= C_ID_PART;
  if (' \t\n\r\f\v'.includes(ch)) CLASS[c] |= C_SPACE;
}
// Non-ASCII characters (except a BOM) are identifier characters; NaN (past the end) is not.
export const isIdStart = (c: number): boolean => (c < 128 ? (CLASS[c] & C_ID_START) !== 0 : c >= 128 && c !== 0xfeff);
export const isIdPart = (c: number): boolean => (c < 128 ? (CLASS[c] & C_ID_PART) !== 0 : c >= 128 && c !== 0xfeff);
export const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
export const isSpace = (c: number): boolean => c < 128 && (CLASS[c] & C_SPACE) !== 0;
export const isHex = (c: number): boolean => c < 128 && (CLASS[c] & C_HEX) !== 0;

// Operators recognized as one token, keyed by their char codes; anything else is one character long.
const code2 = (op: string): number => (op.charCodeAt(0) << 8) | op.charCodeAt(1);
const code3 = (op: string): number => (op.charCodeAt(0) << 16) | (op.charCodeAt(1) << 8) | op.charCodeAt(2);
const THREE_CHAR_OPS = new Set(['<=>', '->>', '#>>', '!~*', '-|-'].map(code3));
const TWO_CHAR_OPS = new Set(
  ['<=', '>=', '<>', '!=', ':=', '||', '&&', '::', '->', '#>', '#-', '@>', '<@', '<<', '>>', '~*', '!~', '@@', '?|', '?&', '&<', '&>', '~~', '^@'].map(code2),
);

/** End of the operator starting at `pos`: a known two- or three-character operator, else one character. */
export function operatorEnd(text: string, pos: number, len: number): number {
  const two = pos + 1 < len ? (text.charCodeAt(pos) << 8) | text.charCodeAt(pos + 1) : -1;
  if (pos + 2 < len && THREE_CHAR_OPS.has((two << 8) | text.charCodeAt(pos + 2))) return pos + 3;
  return TWO_CHAR_OPS.has(two) ? pos + 2 : pos + 1;
}

/** End (exclusive) of the quoted lexeme opening at `from`, or -1 when unterminated; doubled quotes and (with `backslash`) escapes stay inside. */
export function quotedEnd(text: string, from: number, len: number, quote: number, backslash: boolean): number {
  let i = from + 1;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c === quote) {
      if (text.charCodeAt(i + 1) !== quote) return i + 1;
      i += 2;
      continue;
    }
    i += backslash && c === 0x5c ? 2 : 1;
  }
  return -1;
}

/** End of the block comment opening at `from`, or -1 when unterminated; PostgreSQL comments nest. */
export function blockCommentEnd(text: string, from: number, len: number, nests: boolean): number {
  let depth = 1;
  let i = from + 2;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c === 0x2a && text.charCodeAt(i + 1) === 0x2f) {
      i += 2;
      if (--depth === 0) return i;
    } else if (nests && c === 0x2f && text.charCodeAt(i + 1) === 0x2a) {
      depth++;
      i += 2;
    } else i++;
  }
  return -1;
}

/**
 * End of a dollar-quoted body whose tag spans [tagStart, bodyStart), or -1. Each `$` in the body
 * is compared at most up to the next `$` (tag characters are never `$`), so this is linear.
 */
export function dollarBodyEnd(text: string, tagStart: number, bodyStart: number, len: number): number {
  const tagLength = bodyStart - tagStart;
  for (let i = bodyStart; i < len; i++) {
    if (text.charCodeAt(i) !== 0x24) continue;
    let k = 1;
    while (k < tagLength && text.charCodeAt(i + k) === text.charCodeAt(tagStart + k)) k++;
    if (k === tagLength) return i + tagLength;
  }
  return -1;
}
