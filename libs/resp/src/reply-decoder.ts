// Decodes one complete reply into a RespValue, for the replies the proxy must understand.
import { decimalWidth, LENGTH_INCOMPLETE, LENGTH_INVALID, parseDecimal, readLength } from './digits';
import {
  BadReplyLine, IncompleteReply, InvalidBulkLength, InvalidMultibulkLength, MissingCrlf, NestingTooDeep, printableByte, TrailingBytes, UnknownReplyType,
} from './errors';
import { resolveLimits, type RespLimits } from './limits';
import { LINE_NAMES, parseDouble, validLine } from './reply-lines';
import type { RespValue } from './value';
import { Ascii, RespType } from './wire';

type Entries = Array<readonly [RespValue, RespValue]>;

/** The decoder recurses per level, so it stops well inside the JS stack whatever the limits say. */
export const DECODER_MAX_DEPTH = 1_000;

/** A cursor over one reply; each type has its own small reader. */
class ReplyReader {
  pos: number;

  constructor(
    private readonly buf: Buffer,
    start: number,
    private readonly end: number,
    private readonly limits: RespLimits,
  ) {
    this.pos = start;
    this.maxDepth = Math.min(limits.maxNestingDepth, DECODER_MAX_DEPTH);
  }

  private readonly maxDepth: number;

  value(depth: number): RespValue {
    if (this.pos >= this.end) throw IncompleteReply();
    const type = this.buf[this.pos];
    switch (type) {
      case RespType.SimpleString: return { type: 'simple', value: this.text(type) };
      case RespType.Error: return { type: 'error', message: this.text(type), bulk: false };
      case RespType.Integer: return { type: 'integer', value: this.integer() };
      case RespType.Null: return this.nullValue();
      case RespType.Boolean: return { type: 'boolean', value: this.text(type) === 't' };
      case RespType.Double: return { type: 'double', value: this.double() };
      case RespType.BigNumber: return { type: 'bignum', value: BigInt(this.text(type)) };
      case RespType.Bulk: return this.bulk();
      case RespType.BulkError: return { type: 'error', message: this.bulkData(this.length(false)).toString(), bulk: true };
      case RespType.Verbatim: return this.verbatim();
      case RespType.Array: return this.array(depth);
      case RespType.Set: return { type: 'set', items: this.items(this.length(false), depth) };
      case RespType.Push: return { type: 'push', items: this.items(this.length(false), depth) };
      case RespType.Map: return { type: 'map', entries: this.entries(this.length(false), depth) };
      case RespType.Attribute: return this.attribute(depth);
      default: throw UnknownReplyType(printableByte(type));
    }
  }

  /** Validates a one-line element for its type and moves past it; returns the position of its CR. */
  private line(type: number): number {
    const from = this.pos + 1;
    let cr = from;
    while (cr < this.end && this.buf[cr] !== Ascii.CR) cr++;
    if (cr + 1 >= this.end) throw IncompleteReply();
    if (this.buf[cr + 1] !== Ascii.LF || !validLine(type, this.buf, from, cr)) throw BadReplyLine(LINE_NAMES[type]);
    this.pos = cr + 2;
    return cr;
  }

  /** The text of a one-line element. */
  private text(type: number): string {
    const from = this.pos + 1;
    return this.buf.toString('utf8', from, this.line(type));
  }

  private nullValue(): RespValue {
    this.line(RespType.Null);
    return { type: 'null', form: 'null' };
  }

  private integer(): number | bigint {
    const from = this.pos + 1;
    const cr = this.line(RespType.Integer);
    // Up to 15 digits is always a safe integer: read it from the bytes, no string.
    if (cr - from <= 15) {
      const n = parseDecimal(this.buf, from, cr);
      // Leading zeros or "-0" (which Redis never sends) fail the strict parse but are still numbers.
      return Number.isNaN(n) ? Number(this.buf.toString('latin1', from, cr)) : n;
    }
    const big = BigInt(this.buf.toString('latin1', from, cr));
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  }

  private double(): number {
    const value = parseDouble(this.text(RespType.Double));
    if (value === undefined) throw BadReplyLine('double');
    return value;
  }

  /** An aggregate count or bulk length; -1 only where `nullable`. */
  private length(nullable: boolean): number {
    const type = this.buf[this.pos];
    const n = readLength(this.buf, this.pos + 1, this.end);
    if (n === LENGTH_INCOMPLETE) throw IncompleteReply();
    const isBulk = type === RespType.Bulk || type === RespType.BulkError || type === RespType.Verbatim;
    const max = isBulk ? this.limits.maxBulkLength : this.limits.maxAggregateLength;
    if (n === LENGTH_INVALID || n < (nullable ? -1 : 0) || n > max) throw isBulk ? InvalidBulkLength() : InvalidMultibulkLength();
    this.pos += 1 + decimalWidth(n) + 2;
    return n;
  }

  private bulkData(len: number): Buffer {
    const from = this.pos;
    const to = from + len;
    if (to + 2 > this.end) throw IncompleteReply();
    if (this.buf[to] !== Ascii.CR || this.buf[to + 1] !== Ascii.LF) throw MissingCrlf();
    this.pos = to + 2;
    return this.buf.subarray(from, to);
  }

  private bulk(): RespValue {
    const len = this.length(true);
    return len < 0 ? { type: 'null', form: 'bulk' } : { type: 'bulk', value: this.bulkData(len) };
  }

  private verbatim(): RespValue {
    const data = this.bulkData(this.length(false));
    if (data.length < 4 || data[3] !== Ascii.Colon) throw BadReplyLine('verbatim');
    return { type: 'verbatim', format: data.toString('latin1', 0, 3), value: data.subarray(4) };
  }

  private array(depth: number): RespValue {
    const n = this.length(true);
    return n < 0 ? { type: 'null', form: 'array' } : { type: 'array', items: this.items(n, depth) };
  }

  private attribute(depth: number): RespValue {
    const entries = this.entries(this.length(false), depth);
    return { type: 'attribute', entries, value: this.value(depth) };
  }

  private items(n: number, depth: number): RespValue[] {
    if (n > 0 && depth + 1 > this.maxDepth) throw NestingTooDeep(this.maxDepth);
    const items: RespValue[] = [];
    for (let i = 0; i < n; i++) items.push(this.value(depth + 1));
    return items;
  }

  private entries(n: number, depth: number): Entries {
    if (n > 0 && depth + 1 > this.maxDepth) throw NestingTooDeep(this.maxDepth);
    if (n * 2 > this.limits.maxAggregateLength) throw InvalidMultibulkLength();
    const entries: Entries = [];
    for (let i = 0; i < n; i++) entries.push([this.value(depth + 1), this.value(depth + 1)]);
    return entries;
  }
}

/**
 * Decodes exactly one reply in [start, end) of `buf` (normally bounds from a ReplyScanner).
 * Bulk values are views of `buf`. Throws the typed protocol errors on malformed input.
 */
export function decodeReply(buf: Buffer, start = 0, end = buf.length, limits?: Partial<RespLimits>): RespValue {
  const reader = new ReplyReader(buf, start, end, limits === undefined ? DEFAULTS : resolveLimits(limits));
  const value = reader.value(0);
  if (reader.pos !== end) throw TrailingBytes(end - reader.pos);
  return value;
}

const DEFAULTS = resolveLimits();
