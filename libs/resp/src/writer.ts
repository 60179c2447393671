// Batches RESP frames into one Buffer per flush; never rewrites bytes it has handed out.
import { Buffer } from 'node:buffer';
import { commandSize, stringByteLength, writeCommand, writeHeader, writeString, type CommandArg } from './bytes-out';
import { Unencodable } from './errors';
import type { NullForm, RespValue } from './value';
import { Ascii, RespType } from './wire';

export type { CommandArg } from './bytes-out';

const EMPTY = Buffer.alloc(0);

const NULLS: Readonly<Record<NullForm, Buffer>> = {
  bulk: Buffer.from('$-1\r\n'),
  array: Buffer.from('*-1\r\n'),
  null: Buffer.from('_\r\n'),
};

/** The decimal text of a RESP3 double. */
export function doubleText(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return Object.is(value, -0) ? '-0' : String(value);
}

function integerText(value: number | bigint): string | undefined {
  if (typeof value === 'bigint') return value.toString();
  if (!Number.isSafeInteger(value)) throw Unencodable(`integer ${String(value)} is not a safe integer (use a bigint)`);
  return undefined;
}

/**
 * Appends frames into a slab and returns them with `flush()` as one Buffer. A flushed view is
 * never written again: later frames go after it or into a new slab. Allocate one writer per
 * connection, not a shared one.
 */
export class RespWriter {
  private slab: Buffer = EMPTY;
  private pos = 0;
  private mark = 0;

  constructor(private readonly chunkSize = 16 * 1024) {}

  /** Bytes written since the last flush. */
  get length(): number {
    return this.pos - this.mark;
  }

  /** The frames written since the last flush, as one Buffer (empty when none). */
  flush(): Buffer {
    const out = this.slab.subarray(this.mark, this.pos);
    this.mark = this.pos;
    return out;
  }

  raw(bytes: Buffer): this {
    this.reserve(bytes.length);
    this.slab.set(bytes, this.pos);
    this.pos += bytes.length;
    return this;
  }

  simple(text: string): this {
    return this.line(RespType.SimpleString, text);
  }

  /** An error line; CR/LF in the message become spaces, as Redis does. */
  error(message: string): this {
    return this.line(RespType.Error, message);
  }

  integer(value: number | bigint): this {
    const text = integerText(value);
    if (text !== undefined) return this.line(RespType.Integer, text);
    return this.header(RespType.Integer, value as number);
  }

  bulk(value: Buffer | string): this {
    if (typeof value !== 'string') return this.header(RespType.Bulk, value.length).raw(value).crlf();
    const size = stringByteLength(value);
    this.header(RespType.Bulk, size).reserve(size + 2);
    this.pos = writeString(this.slab, this.pos, value, size);
    return this.crlf();
  }

  null(form: NullForm = 'bulk'): this {
    return this.raw(NULLS[form]);
  }

  arrayHeader(n: number): this {
    return this.header(RespType.Array, n);
  }

  mapHeader(pairs: number): this {
    return this.header(RespType.Map, pairs);
  }

  setHeader(n: number): this {
    return this.header(RespType.Set, n);
  }

  pushHeader(n: number): this {
    return this.header(RespType.Push, n);
  }

  attributeHeader(pairs: number): this {
    return this.header(RespType.Attribute, pairs);
  }

  boolean(value: boolean): this {
    return this.line(RespType.Boolean, value ? 't' : 'f');
  }

  double(value: number): this {
    return this.line(RespType.Double, doubleText(value));
  }

  bigNumber(value: bigint): this {
    return this.line(RespType.BigNumber, value.toString());
  }

  bulkError(message: string | Buffer): this {
    const data = typeof message === 'string' ? Buffer.from(message) : message;
    return this.header(RespType.BulkError, data.length).raw(data).crlf();
  }

  /** A RESP3 verbatim string; `format` is three characters such as `txt` or `mkd`. */
  verbatim(format: string, value: Buffer | string): this {
    if (format.length !== 3) throw Unencodable(`verbatim format "${format}" is not three characters`);
    const data = typeof value === 'string' ? Buffer.from(value) : value;
    this.header(RespType.Verbatim, data.length + 4).reserve(4);
    this.pos += this.slab.write(format, this.pos, 'latin1');
    this.slab[this.pos++] = Ascii.Colon;
    return this.raw(data).crlf();
  }

  /** A client command: an array of bulk strings. */
  command(args: readonly CommandArg[]): this {
    this.reserve(commandSize(args));
    this.pos = writeCommand(this.slab, this.pos, args);
    return this;
  }

  /** Any decoded value, recursively. */
  value(v: RespValue): this {
    switch (v.type) {
      case 'simple': return this.simple(v.value);
      case 'error': return v.bulk ? this.bulkError(v.message) : this.error(v.message);
      case 'integer': return this.integer(v.value);
      case 'bulk': return this.bulk(v.value);
      case 'null': return this.null(v.form);
      case 'boolean': return this.boolean(v.value);
      case 'double': return this.double(v.value);
      case 'bignum': return this.bigNumber(v.value);
      case 'verbatim': return this.verbatim(v.format, v.value);
      case 'array': return this.values(this.arrayHeader(v.items.length), v.items);
      case 'set': return this.values(this.setHeader(v.items.length), v.items);
      case 'push': return this.values(this.pushHeader(v.items.length), v.items);
      case 'map': return this.pairs(this.mapHeader(v.entries.length), v.entries);
      case 'attribute': return this.pairs(this.attributeHeader(v.entries.length), v.entries).value(v.value);
    }
  }

  private values(self: this, items: readonly RespValue[]): this {
    for (const item of items) self.value(item);
    return self;
  }

  private pairs(self: this, entries: ReadonlyArray<readonly [RespValue, RespValue]>): this {
    for (const [key, val] of entries) self.value(key).value(val);
    return self;
  }

  /** `<type><n>\r\n` */
  private header(type: number, n: number): this {
    this.reserve(24);
    this.pos = writeHeader(this.slab, this.pos, type, n);
    return this;
  }

  /** `<type><text>\r\n` with CR/LF in `text` replaced by spaces. */
  private line(type: number, text: string): this {
    const size = stringByteLength(text);
    this.reserve(size + 3);
    const start = this.pos + 1;
    this.slab[this.pos] = type;
    this.pos = writeString(this.slab, start, text, size);
    for (let p = start; p < this.pos; p++) {
      if (this.slab[p] === Ascii.CR || this.slab[p] === Ascii.LF) this.slab[p] = Ascii.Space;
    }
    return this.crlf();
  }

  private crlf(): this {
    this.reserve(2);
    this.slab[this.pos++] = Ascii.CR;
    this.slab[this.pos++] = Ascii.LF;
    return this;
  }

  private reserve(n: number): this {
    if (this.pos + n <= this.slab.length) return this;
    const pending = this.pos - this.mark;
    const next = Buffer.allocUnsafe(Math.max(this.chunkSize, pending + n));
    if (pending > 0) next.set(this.slab.subarray(this.mark, this.pos));
    this.slab = next;
    this.mark = 0;
    this.pos = pending;
    return this;
  }
}
