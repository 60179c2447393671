// The result of one ReplyScanner.scan: complete replies as struct-of-arrays boundaries.
import { Buffer } from 'node:buffer';
import { ReplyFlag } from './wire';

const EMPTY = Buffer.alloc(0);

/**
 * Complete replies found by the last scan, valid until the scanner's next `scan` call. Reply
 * `i` is `buffer.subarray(start[i], end[i])` (attributes included); `type[i]` is the type byte
 * of its value (after any attributes) and `flags[i]` holds ReplyFlag bits.
 */
export class ReplyBatch {
  count = 0;
  /** Where the next scan must start: the end of the last complete reply. */
  consumed = 0;
  buffer: Buffer = EMPTY;
  start = new Int32Array(16);
  end = new Int32Array(16);
  type = new Uint8Array(16);
  flags = new Uint8Array(16);

  /** The reply's exact bytes, to forward unchanged (a view, no copy). */
  frame(i: number): Buffer {
    return this.buffer.subarray(this.start[i], this.end[i]);
  }

  isError(i: number): boolean {
    return (this.flags[i] & ReplyFlag.Error) !== 0;
  }

  isPush(i: number): boolean {
    return (this.flags[i] & ReplyFlag.Push) !== 0;
  }

  isNull(i: number): boolean {
    return (this.flags[i] & ReplyFlag.Null) !== 0;
  }

  begin(buffer: Buffer): void {
    this.buffer = buffer;
    this.count = 0;
  }

  push(start: number, end: number, type: number, flags: number): void {
    const i = this.count;
    if (i === this.start.length) this.grow();
    this.start[i] = start;
    this.end[i] = end;
    this.type[i] = type;
    this.flags[i] = flags;
    this.count = i + 1;
  }

  private grow(): void {
    const n = this.start.length * 2;
    const start = new Int32Array(n);
    const end = new Int32Array(n);
    const type = new Uint8Array(n);
    const flags = new Uint8Array(n);
    start.set(this.start);
    end.set(this.end);
    type.set(this.type);
    flags.set(this.flags);
    this.start = start;
    this.end = end;
    this.type = type;
    this.flags = flags;
  }
}
