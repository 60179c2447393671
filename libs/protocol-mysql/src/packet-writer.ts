// The writer cursor: builds framed packets (split at 16 MiB) into one growing buffer.
import { Buffer } from 'node:buffer';
import { InvalidState, InvalidValue } from './errors';

/** The largest payload one frame carries; longer payloads continue in further frames. */
export const MAX_FRAME_PAYLOAD = 0xffffff;

/** Length-encoded integer prefixes. */
export const LENENC_NULL = 0xfb; // NULL in a text row
export const LENENC_U16 = 0xfc; // 2-byte integer follows
export const LENENC_U24 = 0xfd; // 3-byte integer follows
export const LENENC_U64 = 0xfe; // 8-byte integer follows

/** Bytes a length-encoded integer takes on the wire. */
export function lenencSize(n: number | bigint): number {
  if (n < 0xfb) return 1;
  if (n <= 0xffff) return 3;
  if (n <= 0xffffff) return 4;
  return 9;
}

/** A length-encoded integer as its own small buffer. */
export function encodeLenenc(n: number): Buffer {
  if (n < 0xfb) return Buffer.of(n);
  if (n <= 0xffff) return Buffer.of(LENENC_U16, n & 0xff, n >> 8);
  if (n <= 0xffffff) return Buffer.of(LENENC_U24, n & 0xff, (n >> 8) & 0xff, n >> 16);
  const b = Buffer.alloc(9);
  b[0] = LENENC_U64;
  b.writeBigUInt64LE(BigInt(n), 1);
  return b;
}

/**
 * Builds framed packets into one growing buffer, so a burst of replies leaves in one write.
 * Allocate one per connection: `begin(seq)`, write the payload, `end()`, then `flush()`.
 */
export class PacketWriter {
  private buf: Buffer;
  private pos = 0;
  private packetStart = -1;
  private sequenceId = 0;

  constructor(private readonly initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Bytes written since the last flush. */
  get length(): number {
    return this.pos;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2 || this.initialSize;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Starts a packet with the given sequence id; its payload follows. */
  begin(sequenceId: number): this {
    if (this.packetStart >= 0) throw InvalidState('begin() while a packet is open');
    this.ensure(4);
    this.packetStart = this.pos;
    this.sequenceId = sequenceId & 0xff;
    this.pos += 4;
    return this;
  }

  /** Closes the open packet, splitting payloads of 16 MiB - 1 and over; returns the next sequence id. */
  end(): number {
    if (this.packetStart < 0) throw InvalidState('end() without begin()');
    const start = this.packetStart;
    const length = this.pos - start - 4;
    this.packetStart = -1;
    if (length < MAX_FRAME_PAYLOAD) {
      this.buf.writeUIntLE(length, start, 3);
      this.buf[start + 3] = this.sequenceId;
      return (this.sequenceId + 1) & 0xff;
    }
    return this.splitFrames(start, length);
  }

  // Re-lays a long payload as frames of 0xFFFFFF bytes, then a shorter (possibly empty) last frame.
  private splitFrames(start: number, length: number): number {
    const frames = Math.floor(length / MAX_FRAME_PAYLOAD) + 1;
    this.ensure((frames - 1) * 4);
    const payloadStart = start + 4;
    for (let i = frames - 1; i >= 0; i--) {
      const from = payloadStart + i * MAX_FRAME_PAYLOAD;
      const size = Math.min(MAX_FRAME_PAYLOAD, length - i * MAX_FRAME_PAYLOAD);
      const to = start + i * (MAX_FRAME_PAYLOAD + 4);
      this.buf.copy(this.buf, to + 4, from, from + size);
      this.buf.writeUIntLE(size, to, 3);
      this.buf[to + 3] = (this.sequenceId + i) & 0xff;
    }
    this.pos = start + length + frames * 4;
    return (this.sequenceId + frames) & 0xff;
  }

  /**
   * Writes one packet with `body`; if `body` throws (a value that cannot be encoded), the partial
   * packet is discarded so the writer stays usable, and the error propagates.
   */
  framed(sequenceId: number, body: (w: this) => void): number {
    this.begin(sequenceId);
    try {
      body(this);
    } catch (err) {
      this.truncate(this.packetStart);
      throw err;
    }
    return this.end();
  }

  /** Drops everything written after `length` bytes (a value of `length` read earlier), open packet included. */
  truncate(length: number): void {
    if (length < 0 || length > this.pos) throw InvalidState(`truncate(${length}) outside 0..${this.pos}`);
    this.pos = length;
    if (this.packetStart >= length) this.packetStart = -1;
  }

  /** Everything written since the last flush; the writer starts a fresh buffer so the result stays valid. */
  flush(): Buffer {
    if (this.packetStart >= 0) throw InvalidState('flush() while a packet is open');
    const out = this.buf.subarray(0, this.pos);
    this.buf = Buffer.allocUnsafe(Math.max(this.initialSize, 64));
    this.pos = 0;
    return out;
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v & 0xff;
    return this;
  }

  u16(v: number): this {
    this.ensure(2);
    this.pos = this.buf.writeUInt16LE(v & 0xffff, this.pos);
    return this;
  }

  u24(v: number): this {
    this.ensure(3);
    this.pos = this.buf.writeUIntLE(v & 0xffffff, this.pos, 3);
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    this.pos = this.buf.writeUInt32LE(v >>> 0, this.pos);
    return this;
  }

  u64(v: bigint): this {
    this.ensure(8);
    this.pos = this.buf.writeBigUInt64LE(BigInt.asUintN(64, v), this.pos);
    return this;
  }

  i8(v: number): this {
    this.ensure(1);
    this.pos = this.buf.writeInt8(v, this.pos);
    return this;
  }

  i16(v: number): this {
    this.ensure(2);
    this.pos = this.buf.writeInt16LE(v, this.pos);
    return this;
  }

  i32(v: number): this {
    this.ensure(4);
    this.pos = this.buf.writeInt32LE(v, this.pos);
    return this;
  }

  i64(v: bigint): this {
    this.ensure(8);
    this.pos = this.buf.writeBigInt64LE(BigInt.asIntN(64, v), this.pos);
    return this;
  }

  f32(v: number): this {
    this.ensure(4);
    this.pos = this.buf.writeFloatLE(v, this.pos);
    return this;
  }

  f64(v: number): this {
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(v, this.pos);
    return this;
  }

  zeros(n: number): this {
    this.ensure(n);
    this.buf.fill(0, this.pos, this.pos + n);
    this.pos += n;
    return this;
  }

  /** A length-encoded integer (0..2^64-1). */
  lenenc(v: number | bigint): this {
    if (v < 0 || v > 0xffffffffffffffffn) throw InvalidValue(`length-encoded integer ${v} is out of range`);
    if (v < 0xfb) return this.u8(Number(v));
    if (v <= 0xffff) return this.u8(LENENC_U16).u16(Number(v));
    if (v <= 0xffffff) return this.u8(LENENC_U24).u24(Number(v));
    return this.u8(LENENC_U64).u64(BigInt(v));
  }

  /** The 0xFB marker of a NULL text-row value. */
  lenencNull(): this {
    return this.u8(LENENC_NULL);
  }

  bytes(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  string(s: string, encoding: BufferEncoding = 'utf8'): this {
    const n = Buffer.byteLength(s, encoding);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, n, encoding);
    return this;
  }

  lenencBytes(b: Uint8Array): this {
    return this.lenenc(b.length).bytes(b);
  }

  lenencString(s: string, encoding: BufferEncoding = 'utf8'): this {
    return this.lenenc(Buffer.byteLength(s, encoding)).string(s, encoding);
  }

  /** A string followed by a 0x00 terminator. */
  nulString(s: string, encoding: BufferEncoding = 'utf8'): this {
    return this.string(s, encoding).u8(0);
  }
}
