// Byte ranges waiting to be written to one socket, as views of the buffers they were read from:
// adjacent ranges of one buffer merge, so a pipelined batch forwards as a single slice.
import { Buffer } from 'node:buffer';
import type { DirectSocket } from '@dbproxy/runtime';

const EMPTY = Buffer.alloc(0);
/** Above this many bytes, ranges are written corked one by one rather than copied together. */
const COPY_LIMIT = 64 * 1024;

export class OutputQueue {
  /** Bytes handed to the socket since the queue was made (a session's bytes out). */
  written = 0;
  private bufs: Buffer[] = [];
  private starts: number[] = [];
  private ends: number[] = [];
  private count = 0;
  /** Bytes queued. */
  bytes = 0;

  get empty(): boolean {
    return this.count === 0;
  }

  /** Queues `buf[start, end)`; extends the last range when it continues it. */
  append(buf: Buffer, start: number, end: number): void {
    const n = this.count;
    if (n > 0 && this.bufs[n - 1] === buf && this.ends[n - 1] === start) {
      this.ends[n - 1] = end;
    } else {
      this.bufs[n] = buf;
      this.starts[n] = start;
      this.ends[n] = end;
      this.count = n + 1;
    }
    this.bytes += end - start;
  }

  appendBuffer(buf: Buffer): void {
    this.append(buf, 0, buf.length);
  }

  /** Writes everything queued to `to` in one write (or one corked burst for large output); false when the socket buffers. */
  writeTo(to: DirectSocket): boolean {
    const n = this.count;
    if (n === 0) return true;
    this.written += this.bytes;
    let ok: boolean;
    if (n === 1) {
      ok = to.write(this.bufs[0], this.starts[0], this.ends[0]);
    } else if (this.bytes <= COPY_LIMIT) {
      const all = this.concat();
      ok = to.write(all, 0, all.length);
    } else {
      const socket = to.socket;
      socket.cork();
      ok = true;
      for (let i = 0; i < n; i++) ok = socket.write(this.bufs[i].subarray(this.starts[i], this.ends[i])) && ok;
      socket.uncork();
    }
    this.clear();
    return ok;
  }

  /** Everything queued as one Buffer, and the queue emptied. */
  take(): Buffer {
    const out = this.count === 1 ? this.bufs[0].subarray(this.starts[0], this.ends[0]) : this.concat();
    this.clear();
    return out;
  }

  clear(): void {
    for (let i = 0; i < this.count; i++) this.bufs[i] = EMPTY;
    this.count = 0;
    this.bytes = 0;
  }

  private concat(): Buffer {
    const out = Buffer.allocUnsafe(this.bytes);
    let pos = 0;
    for (let i = 0; i < this.count; i++) pos += this.bufs[i].copy(out, pos, this.starts[i], this.ends[i]);
    return out;
  }
}
