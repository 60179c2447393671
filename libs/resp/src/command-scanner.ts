// Finds client command frames (multibulk and inline) and their argument positions in place.
import { CommandBatch } from './command-batch';
import { decimalWidth, LENGTH_INCOMPLETE, readLength } from './digits';
import { ExpectedBulk, InlineNul, InlineTooBig, InvalidBulkLength, InvalidMultibulkLength, MissingCrlf, printableByte, QueryBufferLimit } from './errors';
import { InlineSplitter } from './inline';
import { MAX_OFFSET, resolveLimits, type RespLimits } from './limits';
import { Ascii, CommandFlag, RespType } from './wire';

const Pending = { None: 0, Multibulk: 1, Inline: 2 } as const;

/**
 * Scans a client's input for complete commands. One scanner per connection: it remembers a
 * partially received command, so each `scan` resumes where the previous one stopped instead
 * of starting over. Call `scan(buf, start)` where `start` is the previous `batch.consumed`
 * translated into `buf` (the unconsumed bytes must be unchanged; more may follow them).
 */
export class CommandScanner {
  readonly batch = new CommandBatch();
  /** Bytes, counted from the pending command's start, needed before it can complete (0: unknown). */
  needBytes = 0;
  private limits: RespLimits;
  private readonly inline = new InlineSplitter();
  private pending: number = Pending.None;
  /** Resume point of the pending command, relative to its start. */
  private pendingAt = 0;
  private pendingLeft = 0;
  private pendingFirst = 0;
  private pendingArgs = 0;

  constructor(limits: Partial<RespLimits> = {}) {
    this.limits = resolveLimits(limits);
  }

  /** Changes the bounds (e.g. tighter before AUTH); applies from the next frame. */
  setLimits(limits: Partial<RespLimits>): void {
    this.limits = resolveLimits(limits);
  }

  /** Forgets any partially received command (after the caller drops its buffered input). */
  reset(): void {
    this.pending = Pending.None;
    this.pendingArgs = 0;
    this.pendingFirst = 0;
    this.needBytes = 0;
  }

  /**
   * Scans [start, end) of `buf` and returns the complete commands found (valid until the next
   * call), at most `maxCommands` of them: connection mode asks for 1 and pipes the rest unread.
   */
  scan(buf: Buffer, start = 0, end = buf.length, maxCommands = 0x7fffffff): CommandBatch {
    if (end > MAX_OFFSET) throw QueryBufferLimit(end - start, this.limits.queryBufferLimit);
    // A pending multibulk command must resume on the same bytes; anything else is a new stream.
    if (this.pending === Pending.Multibulk && start < end && buf[start] !== RespType.Array) this.reset();
    const batch = this.batch;
    batch.begin(buf, this.pendingFirst, this.pendingArgs);
    let pos = start;
    while (pos < end && batch.count < maxCommands) {
      const next = buf[pos] === RespType.Array ? this.multibulk(buf, pos, end) : this.inlineLine(buf, pos, end);
      if (next < 0) break;
      pos = next;
    }
    batch.consumed = pos;
    if (pos === end || batch.count === maxCommands) this.needBytes = 0;
    return batch;
  }

  /** Scans one multibulk command at `start`; returns its end, or -1 when incomplete. */
  private multibulk(buf: Buffer, start: number, end: number): number {
    const batch = this.batch;
    const resumed = this.pending === Pending.Multibulk;
    let pos: number;
    let left: number;
    let first: number;
    if (resumed) {
      pos = start + this.pendingAt;
      left = this.pendingLeft;
      first = 0;
    } else {
      const n = readLength(buf, start + 1, end);
      if (n === LENGTH_INCOMPLETE) {
        this.needBytes = end - start + 1;
        return -1;
      }
      if (n > this.limits.maxMultibulkLength || n < -0x40000000) throw InvalidMultibulkLength();
      pos = start + 1 + decimalWidth(n) + 2;
      // Like Redis, `*0` and negative counts are empty commands: consumed, nothing to run.
      if (n <= 0) return pos;
      left = n;
      first = batch.argTotal;
    }
    for (; left > 0; left--) {
      const next = this.argument(buf, pos, end, start);
      if (next < 0) return this.suspend(start, pos, end, left, first);
      pos = next;
    }
    if (pos - start > this.limits.queryBufferLimit) throw QueryBufferLimit(pos - start, this.limits.queryBufferLimit);
    if (resumed) {
      for (let j = 0; j < this.pendingArgs; j++) batch.argOffset[j] += start;
      this.reset();
    }
    batch.pushCommand(start, pos, first, 0);
    return pos;
  }

  /** Scans one `$<len>\r\n<data>\r\n` argument; returns its end, or -1 when incomplete (needBytes set). */
  private argument(buf: Buffer, pos: number, end: number, frameStart: number): number {
    if (pos >= end) return this.need(pos + 1 - frameStart);
    if (buf[pos] !== RespType.Bulk) throw ExpectedBulk(printableByte(buf[pos]));
    const len = readLength(buf, pos + 1, end);
    if (len === LENGTH_INCOMPLETE) return this.need(end + 1 - frameStart);
    if (len < 0 || len > this.limits.maxBulkLength) throw InvalidBulkLength();
    const dataStart = pos + 1 + decimalWidth(len) + 2;
    const dataEnd = dataStart + len;
    if (dataEnd + 2 > end) return this.need(dataEnd + 2 - frameStart);
    if (buf[dataEnd] !== Ascii.CR || buf[dataEnd + 1] !== Ascii.LF) throw MissingCrlf();
    this.batch.pushArg(dataStart, len);
    return dataEnd + 2;
  }

  private need(bytes: number): number {
    this.needBytes = bytes;
    return -1;
  }

  /** Remembers an incomplete multibulk command: arguments so far are kept relative to its start. */
  private suspend(start: number, pos: number, end: number, left: number, first: number): number {
    if (end - start > this.limits.queryBufferLimit) throw QueryBufferLimit(end - start, this.limits.queryBufferLimit);
    const batch = this.batch;
    const from = this.pending === Pending.Multibulk ? this.pendingArgs : first;
    for (let j = from; j < batch.argTotal; j++) batch.argOffset[j] -= start;
    this.pending = Pending.Multibulk;
    this.pendingAt = pos - start;
    this.pendingLeft = left;
    this.pendingFirst = first;
    this.pendingArgs = batch.argTotal - first;
    return -1;
  }

  /** Scans one inline line at `start`; returns its end, or -1 when incomplete. */
  private inlineLine(buf: Buffer, start: number, end: number): number {
    const max = this.limits.maxInlineLength;
    let p = this.pending === Pending.Inline ? start + this.pendingAt : start;
    const stop = Math.min(end, start + max + 2);
    for (; p < stop; p++) {
      const c = buf[p];
      if (c === Ascii.LF) break;
      if (c === Ascii.Nul) throw InlineNul();
    }
    if (p === stop) {
      // One byte of slack: a line of exactly `max` bytes may be waiting for the LF after its CR.
      if (end - start > max + 1) throw InlineTooBig();
      this.pending = Pending.Inline;
      this.pendingAt = p - start;
      this.needBytes = p - start + 1;
      return -1;
    }
    this.pending = Pending.None;
    const lineEnd = p > start && buf[p - 1] === Ascii.CR ? p - 1 : p;
    if (lineEnd - start > max) throw InlineTooBig();
    const first = this.batch.argTotal;
    const decoded = this.inline.split(buf, start, lineEnd, this.batch);
    if (this.batch.argTotal > first) {
      const flags = decoded === undefined ? CommandFlag.Inline : CommandFlag.Inline | CommandFlag.Decoded;
      this.batch.pushCommand(start, p + 1, first, flags, decoded);
    }
    return p + 1;
  }
}
