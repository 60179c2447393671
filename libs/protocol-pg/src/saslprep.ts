// SASLprep (RFC 4013) as PostgreSQL applies it to SCRAM passwords, falling back to the raw password.

type Range = readonly [number, number];

const NON_ASCII_SPACE: readonly Range[] = [
  [0x00a0, 0x00a0], [0x1680, 0x1680], [0x2000, 0x200b], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000],
];
const MAPPED_TO_NOTHING: readonly Range[] = [
  [0x00ad, 0x00ad], [0x034f, 0x034f], [0x1806, 0x1806], [0x180b, 0x180d], [0x200b, 0x200d], [0x2060, 0x2060],
  [0xfe00, 0xfe0f], [0xfeff, 0xfeff],
];
/** RFC 3454 C.1.2 through C.9. */
const PROHIBITED: readonly Range[] = [
  ...NON_ASCII_SPACE,
  [0x0000, 0x001f], [0x007f, 0x009f], [0x0340, 0x0341], [0x06dd, 0x06dd], [0x070f, 0x070f], [0x180e, 0x180e],
  [0x200c, 0x200f], [0x2028, 0x202e], [0x2060, 0x2063], [0x206a, 0x206f], [0x2ff0, 0x2ffb], [0xd800, 0xf8ff],
  [0xfdd0, 0xfdef], [0xfeff, 0xfeff], [0xfff9, 0xffff], [0x1d173, 0x1d17a], [0xe0001, 0xe0001], [0xe0020, 0xe007f],
  [0xf0000, 0x10ffff],
];
/** RFC 3454 D.1 (RandALCat), by script: Hebrew, Arabic, Syriac, Thaana and their presentation forms. */
const RAND_AL = /[\u05BE\u05C0\u05C3\u05D0-\u05F4\u0600-\u07BF\u200F\uFB1D-\uFDFF\uFE70-\uFEFC]/u;
const LETTER = /[\p{L}\p{Mc}]/u;
const UNASSIGNED = /\p{Cn}/u;

function inRanges(code: number, ranges: readonly Range[]): boolean {
  return ranges.some(([lo, hi]) => code >= lo && code <= hi);
}

function isProhibited(code: number): boolean {
  return inRanges(code, PROHIBITED) || (code & 0xfffe) === 0xfffe || UNASSIGNED.test(String.fromCodePoint(code));
}

/**
 * Prepares a SCRAM password the way PostgreSQL does: ASCII passes unchanged; otherwise map,
 * NFKC-normalize and check; when the result would be prohibited, the original is used as is.
 */
export function saslprepPassword(password: string): string {
  if (/^[\x00-\x7f]*$/.test(password)) return password;
  const mapped: number[] = [];
  for (const ch of password) {
    const code = ch.codePointAt(0) ?? 0;
    if (inRanges(code, NON_ASCII_SPACE)) mapped.push(0x20);
    else if (!inRanges(code, MAPPED_TO_NOTHING)) mapped.push(code);
  }
  const normalized = String.fromCodePoint(...mapped).normalize('NFKC');
  const chars = Array.from(normalized);
  if (chars.some((ch) => isProhibited(ch.codePointAt(0) ?? 0))) return password;
  const randAl = chars.map((ch) => RAND_AL.test(ch));
  if (randAl.some(Boolean)) {
    const hasLeftToRight = chars.some((ch, i) => !randAl[i] && LETTER.test(ch));
    if (hasLeftToRight || !randAl[0] || !randAl[chars.length - 1]) return password;
  }
  return normalized;
}
