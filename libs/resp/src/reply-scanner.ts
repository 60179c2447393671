// Finds complete RESP2/RESP3 reply frames (boundaries, type, error/push/null) without decoding them.
import { decimalWidth, LENGTH_INCOMPLETE, readLength } from './digits';
import { BadReplyLine, printableByte, InvalidBulkLength, InvalidMultibulkLength, MissingCrlf, NestingTooDeep, ReplyBufferLimit, UnknownReplyType } from './errors';
import { MAX_OFFSET, resolveLimits, type RespLimits } from './limits';
import { ReplyBatch } from './reply-batch';
import { LINE_NAMES, validLine } from './reply-lines';
import { Ascii, ReplyFlag, RespType } from './wire';

/**
 * Scans a backend's output for complete replies. One scanner per connection: a partially
 * received reply is resumed (aggregate nesting is kept on a small stack), so a huge reply
 * arriving in many chunks is scanned once. Call `scan(buf, start)` with `start` at the
 * previous `batch.consumed` translated into `buf` (those bytes unchanged, more may follow).
 */
/** Nesting levels allocated up front; deeper replies grow the stack. */
const INITIAL_LEVELS = 33;

export class ReplyScanner {
  readonly batch = new ReplyBatch();
  /** Bytes, counted from the pending reply's start, needed before it can complete (0: unknown). */
  needBytes = 0;
  private limits: RespLimits;
  /** Elements still expected at each nesting level; level 0 is the reply itself. */
  private remaining: Int32Array;
  /** 1 where the level is an attribute, which does not count as an element of its parent. */
  private attribute: Uint8Array;
  private depth = 0;
  private complete = false;
  private frameType = 0;
  private frameFlags = 0;
  private pending = false;
  private pendingAt = 0;
  /** Where the CR search of a pending one-line element resumes, relative to the reply start. */
  private lineFrom = 0;

  constructor(limits: Partial<RespLimits> = {}) {
    this.limits = resolveLimits(limits);
    this.remaining = new Int32Array(INITIAL_LEVELS);
    this.attribute = new Uint8Array(INITIAL_LEVELS);
  }

  /** Changes the bounds; applies from the next reply. */
  setLimits(limits: Partial<RespLimits>): void {
    this.limits = resolveLimits(limits);
    this.reset();
  }

  /** Forgets any partially received reply. */
  reset(): void {
    this.pending = false;
    this.needBytes = 0;
    this.open();
  }

  /** Scans [start, end) of `buf` and returns the complete replies found, at most `maxReplies` (valid until the next call). */
  scan(buf: Buffer, start = 0, end = buf.length, maxReplies = 0x7fffffff): ReplyBatch {
    if (end > MAX_OFFSET) throw ReplyBufferLimit(end - start, this.limits.replyBufferLimit);
    const batch = this.batch;
    batch.begin(buf);
    let frameStart = start;
    let pos = start;
    if (this.pending) pos += this.pendingAt;
    else this.open();
    while (pos < end && batch.count < maxReplies) {
      const next = this.element(buf, pos, end, frameStart);
      if (next < 0) break;
      pos = next;
      if (this.complete) {
        if (pos - frameStart > this.limits.replyBufferLimit) throw ReplyBufferLimit(pos - frameStart, this.limits.replyBufferLimit);
        batch.push(frameStart, pos, this.frameType, this.frameFlags);
        frameStart = pos;
        this.open();
      }
    }
    batch.consumed = frameStart;
    // Stopping at maxReplies leaves the rest unread, not pending.
    this.pending = frameStart < end && batch.count < maxReplies;
    this.pendingAt = pos - frameStart;
    if (!this.pending) this.needBytes = 0;
    else if (end - frameStart > this.limits.replyBufferLimit) throw ReplyBufferLimit(end - frameStart, this.limits.replyBufferLimit);
    else if (this.needBytes <= end - frameStart) this.needBytes = end - frameStart + 1;
    return batch;
  }

  private open(): void {
    this.depth = 0;
    this.remaining[0] = 1;
    this.complete = false;
    this.frameType = 0;
    this.frameFlags = 0;
    this.lineFrom = 0;
    this.needBytes = 0;
  }

  /** Scans one element at `pos`; returns the position after it (or after its aggregate header), -1 when incomplete. */
  private element(buf: Buffer, pos: number, end: number, frameStart: number): number {
    const type = buf[pos];
    if (this.depth === 0) this.noteTopLevel(type);
    switch (type) {
      case RespType.Bulk:
      case RespType.BulkError:
      case RespType.Verbatim:
        return this.bulk(buf, pos, end, frameStart, type);
      case RespType.Array:
      case RespType.Set:
      case RespType.Push:
        return this.aggregate(buf, pos, end, type, 1);
      case RespType.Map:
      case RespType.Attribute:
        return this.aggregate(buf, pos, end, type, 2);
      case RespType.SimpleString:
      case RespType.Error:
      case RespType.Integer:
      case RespType.Null:
      case RespType.Boolean:
      case RespType.Double:
      case RespType.BigNumber:
        return this.line(buf, pos, end, frameStart, type);
      default:
        throw UnknownReplyType(printableByte(type));
    }
  }

  private noteTopLevel(type: number): void {
    if (type === RespType.Attribute) {
      this.frameFlags |= ReplyFlag.Attribute;
      return;
    }
    this.frameType = type;
    if (type === RespType.Error || type === RespType.BulkError) this.frameFlags |= ReplyFlag.Error;
    else if (type === RespType.Push) this.frameFlags |= ReplyFlag.Push;
    else if (type === RespType.Null) this.frameFlags |= ReplyFlag.Null;
  }

  private line(buf: Buffer, pos: number, end: number, frameStart: number, type: number): number {
    let p = Math.max(pos + 1, frameStart + this.lineFrom);
    const stop = Math.min(end, pos + 2 + this.limits.maxBulkLength);
    while (p < stop && buf[p] !== Ascii.CR) p++;
    if (p === stop && stop < end) throw BadReplyLine(LINE_NAMES[type]);
    if (p + 1 >= end) {
      this.lineFrom = p - frameStart;
      return -1;
    }
    if (buf[p + 1] !== Ascii.LF || !validLine(type, buf, pos + 1, p)) throw BadReplyLine(LINE_NAMES[type]);
    this.lineFrom = 0;
    this.done();
    return p + 2;
  }

  private bulk(buf: Buffer, pos: number, end: number, frameStart: number, type: number): number {
    const len = readLength(buf, pos + 1, end);
    if (len === LENGTH_INCOMPLETE) return -1;
    const dataStart = pos + 1 + decimalWidth(len) + 2;
    if (len === -1 && type === RespType.Bulk) {
      if (this.depth === 0) this.frameFlags |= ReplyFlag.Null;
      this.done();
      return dataStart;
    }
    if (len < 0 || len > this.limits.maxBulkLength) throw InvalidBulkLength();
    const dataEnd = dataStart + len;
    if (dataEnd + 2 > end) {
      this.needBytes = dataEnd + 2 - frameStart;
      return -1;
    }
    if (buf[dataEnd] !== Ascii.CR || buf[dataEnd + 1] !== Ascii.LF) throw MissingCrlf();
    this.done();
    return dataEnd + 2;
  }

  private aggregate(buf: Buffer, pos: number, end: number, type: number, perEntry: number): number {
    const n = readLength(buf, pos + 1, end);
    if (n === LENGTH_INCOMPLETE) return -1;
    const next = pos + 1 + decimalWidth(n) + 2;
    if (n === -1 && type === RespType.Array) {
      if (this.depth === 0) this.frameFlags |= ReplyFlag.Null;
      this.done();
      return next;
    }
    if (n < 0 || n * perEntry > this.limits.maxAggregateLength) throw InvalidMultibulkLength();
    const isAttribute = type === RespType.Attribute;
    if (n === 0) {
      // An empty attribute annotates nothing; the value it precedes is still expected.
      if (!isAttribute) this.done();
      return next;
    }
    const depth = this.depth + 1;
    if (depth > this.limits.maxNestingDepth) throw NestingTooDeep(this.limits.maxNestingDepth);
    if (depth >= this.remaining.length) this.growLevels();
    this.remaining[depth] = n * perEntry;
    this.attribute[depth] = isAttribute ? 1 : 0;
    this.depth = depth;
    return next;
  }

  /** Doubles the nesting stack (kept small for the common shallow reply; bounded by maxNestingDepth). */
  private growLevels(): void {
    const size = Math.min(this.remaining.length * 2, this.limits.maxNestingDepth + 1);
    const remaining = new Int32Array(size);
    remaining.set(this.remaining);
    const attribute = new Uint8Array(size);
    attribute.set(this.attribute);
    this.remaining = remaining;
    this.attribute = attribute;
  }

  /** One element finished: count it against its level, closing every level it completes. */
  private done(): void {
    let d = this.depth;
    for (;;) {
      if (--this.remaining[d] > 0) break;
      if (d === 0) {
        this.complete = true;
        break;
      }
      // A closed attribute is not an element of its parent: the value it annotates follows.
      const wasAttribute = this.attribute[d] === 1;
      d--;
      if (wasAttribute) break;
    }
    this.depth = d;
  }
}
