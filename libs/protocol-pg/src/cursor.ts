// Bounds-checked reader over one message body, and a growable writer that frames messages.
import { Buffer } from 'node:buffer';
import { EncodeInvalid, MalformedMessage } from './errors';

/** Reads one message body; every overrun is a typed DBP_ERR_PG_MALFORMED naming the message. */
export class MessageReader {
  private offset = 0;

  constructor(
    private readonly buf: Buffer,
    readonly what: string,
  ) {}

  get remaining(): number {
    return this.buf.length - this.offset;
  }

  fail(detail: string): never {
    throw MalformedMessage(this.what, detail);
  }

  private take(n: number): number {
    if (n > this.remaining) this.fail(`needs ${n} more bytes at offset ${this.offset}, has ${this.remaining}`);
    const at = this.offset;
    this.offset += n;
    return at;
  }

  u8(): number {
    return this.buf[this.take(1)];
  }

  i16(): number {
    return this.buf.readInt16BE(this.take(2));
  }

  u16(): number {
    return this.buf.readUInt16BE(this.take(2));
  }

  i32(): number {
    return this.buf.readInt32BE(this.take(4));
  }

  u32(): number {
    return this.buf.readUInt32BE(this.take(4));
  }

  /** A NUL-terminated UTF-8 string. */
  cstring(): string {
    const end = this.buf.indexOf(0, this.offset);
    if (end < 0) this.fail(`missing string terminator at offset ${this.offset}`);
    const value = this.buf.toString('utf8', this.offset, end);
    this.offset = end + 1;
    return value;
  }

  /** `n` bytes as a slice of the message (no copy). */
  bytes(n: number): Buffer {
    const at = this.take(n);
    return this.buf.subarray(at, at + n);
  }

  /** An int32 length then that many bytes; length -1 is SQL NULL. */
  nullableBytes(): Buffer | null {
    const length = this.i32();
    if (length === -1) return null;
    if (length < 0) this.fail(`negative value length ${length}`);
    return this.bytes(length);
  }

  /** An int16 count (read unsigned, up to 65535, as the server does) followed by that many items. */
  list<T>(item: () => T): T[] {
    const count = this.u16();
    const items = new Array<T>(count);
    for (let i = 0; i < count; i++) items[i] = item();
    return items;
  }

  /** Everything not read yet. */
  rest(): Buffer {
    return this.bytes(this.remaining);
  }

  /** Asserts the body has been consumed exactly, like PostgreSQL's pq_getmsgend. */
  end(): void {
    if (this.remaining !== 0) this.fail(`${this.remaining} trailing bytes`);
  }
}

function checkInt(what: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw EncodeInvalid(what, `${value} is outside ${min}..${max}`);
  }
}

/**
 * Appends framed messages into one growing buffer so a tick's output is one write.
 * Allocate one per connection: `flush()` hands the bytes over and starts a fresh buffer,
 * so a Buffer returned earlier is never overwritten.
 */
export class MessageWriter {
  private buf: Buffer;
  private offset = 0;
  private readonly frames: number[] = [];

  constructor(private readonly initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Bytes written and not yet flushed. */
  get length(): number {
    return this.offset;
  }

  private ensure(n: number): void {
    if (this.offset + n <= this.buf.length) return;
    let size = Math.max(this.buf.length, 64);
    while (size < this.offset + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.offset);
    this.buf = next;
  }

  /** Opens a typed message: the type byte and a length patched by `end()`. */
  begin(code: number): this {
    this.u8(code);
    this.frames.push(this.offset);
    return this.i32(0);
  }

  /** Opens an untyped startup-phase packet: a length patched by `end()`. */
  beginUntyped(): this {
    this.frames.push(this.offset);
    return this.i32(0);
  }

  /** Closes the innermost open message by writing its length (which counts itself, not the type byte). */
  end(): this {
    const at = this.frames.pop();
    if (at === undefined) throw EncodeInvalid('message', 'end() without begin()');
    const length = this.offset - at;
    checkInt('message length', length, 4, 0x7fffffff);
    this.buf.writeInt32BE(length, at);
    return this;
  }

  u8(value: number): this {
    checkInt('byte', value, 0, 0xff);
    this.ensure(1);
    this.buf[this.offset++] = value;
    return this;
  }

  i16(value: number): this {
    checkInt('int16', value, -0x8000, 0x7fff);
    this.ensure(2);
    this.offset = this.buf.writeInt16BE(value, this.offset);
    return this;
  }

  u16(value: number): this {
    checkInt('uint16', value, 0, 0xffff);
    this.ensure(2);
    this.offset = this.buf.writeUInt16BE(value, this.offset);
    return this;
  }

  i32(value: number): this {
    checkInt('int32', value, -0x80000000, 0x7fffffff);
    this.ensure(4);
    this.offset = this.buf.writeInt32BE(value, this.offset);
    return this;
  }

  u32(value: number): this {
    checkInt('uint32', value, 0, 0xffffffff);
    this.ensure(4);
    this.offset = this.buf.writeUInt32BE(value, this.offset);
    return this;
  }

  /** A UTF-8 string and its NUL terminator; a string containing NUL cannot be framed. */
  cstring(value: string): this {
    if (value.includes('\0')) throw EncodeInvalid('string', 'it contains a NUL character');
    const n = Buffer.byteLength(value, 'utf8');
    this.ensure(n + 1);
    this.offset += this.buf.write(value, this.offset, n, 'utf8');
    this.buf[this.offset++] = 0;
    return this;
  }

  bytes(value: Uint8Array): this {
    this.ensure(value.length);
    this.buf.set(value, this.offset);
    this.offset += value.length;
    return this;
  }

  /** An int32 length then the bytes; null is written as length -1. */
  nullableBytes(value: Uint8Array | null): this {
    if (value === null) return this.i32(-1);
    return this.i32(value.length).bytes(value);
  }

  /** An int16 count and the items. */
  list<T>(items: readonly T[], item: (value: T) => void): this {
    this.u16(items.length);
    for (const value of items) item(value);
    return this;
  }

  /** Runs `write`; if it throws, drops whatever it wrote so the buffer holds only whole messages. */
  atomic(write: (writer: this) => void): this {
    const offset = this.offset;
    const depth = this.frames.length;
    try {
      write(this);
    } catch (err) {
      this.offset = offset;
      this.frames.length = depth;
      throw err;
    }
    return this;
  }

  /** Returns everything written since the last flush and starts a fresh buffer. */
  flush(): Buffer {
    if (this.frames.length > 0) throw EncodeInvalid('message', 'flush() inside an unfinished message');
    const out = this.buf.subarray(0, this.offset);
    this.buf = Buffer.allocUnsafe(this.initialSize);
    this.offset = 0;
    return out;
  }
}
