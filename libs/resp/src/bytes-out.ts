// Low-level writes of RESP pieces at a position; callers reserve the space first.
import { Buffer } from 'node:buffer';
import { decimalWidth, writeDecimal } from './digits';
import { Ascii, RespType } from './wire';

/** A command argument: Buffers are copied as bytes, strings written as UTF-8, numbers in decimal. */
export type CommandArg = string | Buffer | number;

// Short ASCII strings are written byte by byte: cheaper than a call into Buffer#write.
const SHORT = 64;

/** UTF-8 length of `s`, computed in JavaScript for short ASCII strings. */
export function stringByteLength(s: string): number {
  if (s.length > SHORT) return Buffer.byteLength(s);
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s);
  return s.length;
}

/** Writes `s` (whose UTF-8 length is `byteLength`) at `pos`; returns the position after it. */
export function writeString(buf: Buffer, pos: number, s: string, byteLength: number): number {
  if (byteLength !== s.length) return pos + buf.write(s, pos, byteLength, 'utf8');
  if (byteLength > SHORT) return pos + buf.write(s, pos, byteLength, 'latin1');
  for (let i = 0; i < byteLength; i++) buf[pos + i] = s.charCodeAt(i);
  return pos + byteLength;
}

/** Writes `<type><n>\r\n`; returns the position after it. */
export function writeHeader(buf: Buffer, pos: number, type: number, n: number): number {
  buf[pos] = type;
  pos = writeDecimal(buf, pos + 1, n);
  buf[pos] = Ascii.CR;
  buf[pos + 1] = Ascii.LF;
  return pos + 2;
}

/** Bytes of an argument's bulk payload. */
export function argByteLength(arg: CommandArg): number {
  if (typeof arg === 'string') return stringByteLength(arg);
  if (typeof arg !== 'number') return arg.length;
  return Number.isSafeInteger(arg) ? decimalWidth(arg) : String(arg).length;
}

/** Encoded size of a bulk frame carrying `n` bytes. */
export function bulkFrameSize(n: number): number {
  return 1 + decimalWidth(n) + 2 + n + 2;
}

/** Writes one argument as `$<len>\r\n<bytes>\r\n`, given its payload length; returns the position after it. */
export function writeArg(buf: Buffer, pos: number, arg: CommandArg, length: number): number {
  pos = writeHeader(buf, pos, RespType.Bulk, length);
  if (typeof arg === 'string') pos = writeString(buf, pos, arg, length);
  else if (typeof arg !== 'number') {
    buf.set(arg, pos);
    pos += length;
  } else if (Number.isSafeInteger(arg)) pos = writeDecimal(buf, pos, arg);
  else pos = writeString(buf, pos, String(arg), length);
  buf[pos] = Ascii.CR;
  buf[pos + 1] = Ascii.LF;
  return pos + 2;
}

/** Encoded size of a whole command. */
export function commandSize(args: readonly CommandArg[]): number {
  let size = 1 + decimalWidth(args.length) + 2;
  for (let i = 0; i < args.length; i++) size += bulkFrameSize(argByteLength(args[i]));
  return size;
}

/** Writes a whole command (space reserved by commandSize); returns the position after it. */
export function writeCommand(buf: Buffer, pos: number, args: readonly CommandArg[]): number {
  pos = writeHeader(buf, pos, RespType.Array, args.length);
  for (let i = 0; i < args.length; i++) pos = writeArg(buf, pos, args[i], argByteLength(args[i]));
  return pos;
}
