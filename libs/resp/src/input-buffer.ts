// Accumulates socket chunks for a scanner without ever overwriting bytes already handed out.
import { Buffer } from 'node:buffer';

const EMPTY = Buffer.alloc(0);

/**
 * Holds unconsumed input as [start, end) of `buffer`. A chunk that arrives with nothing
 * pending is used as is (no copy). Otherwise it is appended into spare capacity after `end`
 * or, when that is short, into a new buffer at least twice the pending bytes and sized for
 * `needBytes` (so a large bulk value is copied about once) - but never more than `maxAhead`
 * bytes beyond what has arrived, so a header alone cannot make the proxy reserve 512 MiB.
 * Bytes before `end` are never rewritten, so views of frames the caller forwarded stay valid.
 */
export class InputBuffer {
  buffer: Buffer = EMPTY;
  start = 0;
  end = 0;
  private owned = false;

  constructor(
    private readonly minCapacity = 16 * 1024,
    private readonly maxAhead = 4 * 1024 * 1024,
  ) {}

  /** Unconsumed bytes. */
  get length(): number {
    return this.end - this.start;
  }

  /** Adds `chunk`; `needBytes` (a scanner's hint, counted from `start`) sizes any new buffer. */
  append(chunk: Buffer, needBytes = 0): void {
    this.appendRange(chunk, 0, chunk.length, needBytes);
  }

  /**
   * Adds `buf[from, to)`, bytes the caller never rewrites (a read copied into a slab): used in
   * place when nothing is pending, so a read needs no Buffer of its own.
   */
  appendRange(buf: Buffer, from: number, to: number, needBytes = 0): void {
    const pending = this.end - this.start;
    const n = to - from;
    if (pending === 0) {
      this.buffer = buf;
      this.start = from;
      this.end = to;
      this.owned = false;
      return;
    }
    if (this.owned && this.end + n <= this.buffer.length) {
      buf.copy(this.buffer, this.end, from, to);
      this.end += n;
      return;
    }
    const have = pending + n;
    const size = Math.max(have, Math.min(needBytes, have + this.maxAhead), pending * 2, this.minCapacity);
    const next = Buffer.allocUnsafe(size);
    this.buffer.copy(next, 0, this.start, this.end);
    buf.copy(next, pending, from, to);
    this.buffer = next;
    this.start = 0;
    this.end = have;
    this.owned = true;
  }

  /** Marks everything before `position` (an offset into `buffer`) as consumed. */
  consume(position: number): void {
    this.start = position;
  }
}
