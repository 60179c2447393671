// Decimal integers read from and written to bytes without creating strings.
import { Ascii } from './wire';

/** readLength: the line is not complete yet. */
export const LENGTH_INCOMPLETE = -2147483648;
/** readLength: the line is not a valid length. */
export const LENGTH_INVALID = -2147483647;
const MAX_LENGTH = 0x7fffffff;
const MAX_NEGATIVE = 0x40000000;

/**
 * Reads the `<digits>\r\n` of a length header (`*3\r\n`, `$-1\r\n`) starting at `pos`, with
 * Redis string2ll rules: optional '-', no '+', no leading zeros, no "-0". Returns the value,
 * LENGTH_INCOMPLETE when `end` cuts the line, or LENGTH_INVALID. The line then ends at
 * `pos + decimalWidth(value) + 2`.
 */
export function readLength(buf: Buffer, pos: number, end: number): number {
  if (pos >= end) return LENGTH_INCOMPLETE;
  let c = buf[pos];
  let negative = false;
  if (c === Ascii.Minus) {
    negative = true;
    if (++pos >= end) return LENGTH_INCOMPLETE;
    c = buf[pos];
  }
  let n = 0;
  if (c === Ascii.Zero) {
    if (negative) return LENGTH_INVALID;
    if (++pos >= end) return LENGTH_INCOMPLETE;
    c = buf[pos];
  } else if (c >= Ascii.One && c <= Ascii.Nine) {
    n = c - Ascii.Zero;
    for (;;) {
      if (++pos >= end) return LENGTH_INCOMPLETE;
      c = buf[pos];
      if (c < Ascii.Zero || c > Ascii.Nine) break;
      n = n * 10 + (c - Ascii.Zero);
      if (n > MAX_LENGTH) return LENGTH_INVALID;
    }
  } else {
    return LENGTH_INVALID;
  }
  if (c !== Ascii.CR) return LENGTH_INVALID;
  if (pos + 1 >= end) return LENGTH_INCOMPLETE;
  if (buf[pos + 1] !== Ascii.LF) return LENGTH_INVALID;
  if (!negative) return n;
  return n > MAX_NEGATIVE ? LENGTH_INVALID : -n;
}

/** Number of characters of `n` written in decimal (with its sign). */
export function decimalWidth(n: number): number {
  if (n < 0) return 1 + decimalWidth(-n);
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10000) return 4;
  let width = 5;
  for (let limit = 100000; n >= limit && width < 16; limit *= 10) width++;
  return width;
}

/** Writes integer `n` (|n| < 2^53) in decimal at `pos`; returns the position after it. */
export function writeDecimal(buf: Buffer, pos: number, n: number): number {
  if (n < 0) {
    buf[pos++] = Ascii.Minus;
    n = -n;
  }
  if (n < 10) {
    buf[pos] = Ascii.Zero + n;
    return pos + 1;
  }
  const end = pos + decimalWidth(n);
  for (let at = end - 1; at >= pos; at--) {
    const q = Math.floor(n / 10);
    buf[at] = Ascii.Zero + (n - q * 10);
    n = q;
  }
  return end;
}

/**
 * Parses a whole-field signed decimal (Redis string2ll rules) in [pos, end). Returns NaN when
 * the bytes are not an integer or the value is not a safe JavaScript integer.
 */
export function parseDecimal(buf: Buffer, pos: number, end: number): number {
  if (pos >= end) return NaN;
  let negative = false;
  if (buf[pos] === Ascii.Minus) {
    negative = true;
    if (++pos >= end) return NaN;
  }
  const first = buf[pos];
  if (first === Ascii.Zero) return pos + 1 === end && !negative ? 0 : NaN;
  if (first < Ascii.One || first > Ascii.Nine) return NaN;
  let n = 0;
  for (; pos < end; pos++) {
    const c = buf[pos];
    if (c < Ascii.Zero || c > Ascii.Nine) return NaN;
    n = n * 10 + (c - Ascii.Zero);
  }
  if (n > Number.MAX_SAFE_INTEGER) return NaN;
  return negative ? -n : n;
}
