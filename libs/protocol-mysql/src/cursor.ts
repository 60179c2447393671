// Cursors over packet payloads: the reader here, the writer in packet-writer.ts (re-exported).
import { MalformedPacket, PacketTruncated } from './errors';
import { LENENC_NULL, LENENC_U16, LENENC_U24, LENENC_U64 } from './packet-writer';

/** Reads one payload left to right; every read checks bounds and throws a typed error. */
export class PacketReader {
  offset: number;

  constructor(
    readonly buffer: Buffer,
    offset = 0,
    readonly end: number = buffer.length,
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  atEnd(): boolean {
    return this.offset >= this.end;
  }

  /** The next byte without consuming it. */
  peek(): number {
    this.need(1, 'int<1>');
    return this.buffer[this.offset];
  }

  private need(n: number, what: string): void {
    if (this.end - this.offset < n) throw PacketTruncated(what, n, this.end - this.offset);
  }

  skip(n: number, what = 'filler'): void {
    this.need(n, what);
    this.offset += n;
  }

  u8(what = 'int<1>'): number {
    this.need(1, what);
    return this.buffer[this.offset++];
  }

  u16(what = 'int<2>'): number {
    this.need(2, what);
    // bytes read in place (bounds checked above): Buffer#readUInt16LE validates its offset again, in JavaScript
    const b = this.buffer;
    const at = this.offset;
    this.offset = at + 2;
    return (b[at] as number) | ((b[at + 1] as number) << 8);
  }

  u24(what = 'int<3>'): number {
    this.need(3, what);
    const b = this.buffer;
    const at = this.offset;
    this.offset = at + 3;
    return (b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16);
  }

  u32(what = 'int<4>'): number {
    this.need(4, what);
    const b = this.buffer;
    const at = this.offset;
    this.offset = at + 4;
    return ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16)) + (b[at + 3] as number) * 0x1000000;
  }

  u64(what = 'int<8>'): bigint {
    this.need(8, what);
    const v = this.buffer.readBigUInt64LE(this.offset);
    this.offset += 8;
    return v;
  }

  i8(what = 'int<1>'): number {
    this.need(1, what);
    return this.buffer.readInt8(this.offset++);
  }

  i16(what = 'int<2>'): number {
    this.need(2, what);
    const v = this.buffer.readInt16LE(this.offset);
    this.offset += 2;
    return v;
  }

  i32(what = 'int<4>'): number {
    this.need(4, what);
    const v = this.buffer.readInt32LE(this.offset);
    this.offset += 4;
    return v;
  }

  i64(what = 'int<8>'): bigint {
    this.need(8, what);
    const v = this.buffer.readBigInt64LE(this.offset);
    this.offset += 8;
    return v;
  }

  f32(what = 'float'): number {
    this.need(4, what);
    const v = this.buffer.readFloatLE(this.offset);
    this.offset += 4;
    return v;
  }

  f64(what = 'double'): number {
    this.need(8, what);
    const v = this.buffer.readDoubleLE(this.offset);
    this.offset += 8;
    return v;
  }

  /** A length-encoded integer as a bigint; `null` for the 0xFB NULL marker. */
  lenencBig(what = 'int<lenenc>'): bigint | null {
    const first = this.u8(what);
    if (first < LENENC_NULL) return BigInt(first);
    if (first === LENENC_NULL) return null;
    if (first === LENENC_U16) return BigInt(this.u16(what));
    if (first === LENENC_U24) return BigInt(this.u24(what));
    if (first === LENENC_U64) return this.u64(what);
    throw MalformedPacket(`${what} starts with 0xff`);
  }

  /** A length-encoded integer that must fit a JS number (counts, lengths); `null` for 0xFB. */
  lenencOrNull(what = 'int<lenenc>'): number | null {
    const first = this.u8(what);
    if (first < LENENC_NULL) return first;
    if (first === LENENC_NULL) return null;
    if (first === LENENC_U16) return this.u16(what);
    if (first === LENENC_U24) return this.u24(what);
    if (first === LENENC_U64) {
      const v = this.u64(what);
      if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw MalformedPacket(`${what} of ${v} is out of range`);
      return Number(v);
    }
    throw MalformedPacket(`${what} starts with 0xff`);
  }

  /** A length-encoded integer where NULL is not allowed. */
  lenenc(what = 'int<lenenc>'): number {
    const v = this.lenencOrNull(what);
    if (v === null) throw MalformedPacket(`${what} is NULL`);
    return v;
  }

  /** `n` bytes as a slice of the packet (no copy). */
  bytes(n: number, what = 'string<fix>'): Buffer {
    this.need(n, what);
    const v = this.buffer.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  /** A length-encoded byte string (slice); `null` for the 0xFB NULL marker. */
  lenencBytesOrNull(what = 'string<lenenc>'): Buffer | null {
    const n = this.lenencOrNull(what);
    return n === null ? null : this.bytes(n, what);
  }

  lenencBytes(what = 'string<lenenc>'): Buffer {
    return this.bytes(this.lenenc(what), what);
  }

  lenencString(what = 'string<lenenc>', encoding: BufferEncoding = 'utf8'): string {
    return this.lenencBytes(what).toString(encoding);
  }

  /** Bytes up to a 0x00 terminator (consumed, not returned). */
  nulBytes(what = 'string<NUL>'): Buffer {
    const at = this.buffer.indexOf(0, this.offset);
    if (at < 0 || at >= this.end) throw PacketTruncated(`${what} terminator`, 1, 0);
    const v = this.buffer.subarray(this.offset, at);
    this.offset = at + 1;
    return v;
  }

  nulString(what = 'string<NUL>', encoding: BufferEncoding = 'utf8'): string {
    return this.nulBytes(what).toString(encoding);
  }

  /** Everything left in the packet (slice). */
  rest(): Buffer {
    const v = this.buffer.subarray(this.offset, this.end);
    this.offset = this.end;
    return v;
  }

  restString(encoding: BufferEncoding = 'utf8'): string {
    return this.rest().toString(encoding);
  }
}

export { PacketWriter, encodeLenenc, lenencSize, MAX_FRAME_PAYLOAD } from './packet-writer';
