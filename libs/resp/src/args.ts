// Reading a command argument in place: compare, convert or slice it without copying first.
import { parseDecimal } from './digits';

/**
 * True when the `length` bytes at `offset` equal the ASCII `name`, ignoring letter case
 * (`argEquals(buf, off, len, 'GET')` matches `get`, `Get`, `GET`). Allocates nothing.
 */
export function argEquals(buf: Buffer, offset: number, length: number, name: string): boolean {
  if (length !== name.length) return false;
  for (let i = 0; i < length; i++) {
    const b = buf[offset + i];
    const c = name.charCodeAt(i);
    if (b === c) continue;
    const folded = b | 0x20;
    // Only letters fold: 'a'..'z' are 0x61..0x7a.
    if (folded !== (c | 0x20) || folded < 0x61 || folded > 0x7a) return false;
  }
  return true;
}

/** The argument decoded as a string (UTF-8 unless told otherwise). */
export function argToString(buf: Buffer, offset: number, length: number, encoding: BufferEncoding = 'utf8'): string {
  return buf.toString(encoding, offset, offset + length);
}

/** The argument as a Buffer view over the same memory (no copy). */
export function argToBuffer(buf: Buffer, offset: number, length: number): Buffer {
  return buf.subarray(offset, offset + length);
}

/** The argument as an integer (Redis string2ll rules), or NaN when it is not a safe integer. */
export function argToInt(buf: Buffer, offset: number, length: number): number {
  return parseDecimal(buf, offset, offset + length);
}
