// Strictly ordered replies: every command gets the next sequence number; replies may arrive in
// any order (several backends, fan-outs, retries) and leave for the client in sequence order.
import { Buffer } from 'node:buffer';
import { latencyClock, type LatencyCell } from '@dbproxy/observability';
import type { OutputQueue } from '../io/output-queue';

/** Sequence numbers wrap at 2^30 so that `seq & mask` stays a valid ring index. */
export const SEQ_MASK = 0x3fffffff;
const EMPTY = Buffer.alloc(0);

export class ReplyRing {
  private capacity = 16;
  private bufs: Buffer[] = new Array<Buffer>(16).fill(EMPTY);
  private starts = new Int32Array(16);
  private ends = new Int32Array(16);
  private ready = new Uint8Array(16);
  /** Latency cell of a timed command (its reply leaving observes it) and when it was sent. */
  private timed: (LatencyCell | null)[] = new Array<LatencyCell | null>(16).fill(null);
  private sentAt = new Float64Array(16);
  /** Oldest sequence whose reply has not left yet. */
  private head = 0;
  /** Next sequence to hand out. */
  private tail = 0;

  constructor(private readonly out: OutputQueue) {}

  /** Replies owed to the client (reserved and not yet emitted). */
  get outstanding(): number {
    return (this.tail - this.head) & SEQ_MASK;
  }

  /** True when `seq` is the newest reply owed: nothing was dispatched after it. */
  isNewest(seq: number): boolean {
    return this.outstanding > 0 && ((this.tail - 1) & SEQ_MASK) === seq;
  }

  /** The sequence the next reserve() hands out. */
  get next(): number {
    return this.tail;
  }

  reserve(): number {
    if (this.outstanding === this.capacity) this.grow();
    const seq = this.tail;
    this.ready[seq & (this.capacity - 1)] = 0;
    this.timed[seq & (this.capacity - 1)] = null;
    this.tail = (seq + 1) & SEQ_MASK;
    return seq;
  }

  /** The reply to `seq` (just reserved) is timed into `cell` from now until it leaves for the client. */
  time(seq: number, cell: LatencyCell): void {
    const i = seq & (this.capacity - 1);
    this.timed[i] = cell;
    this.sentAt[i] = latencyClock();
  }

  private observe(i: number): void {
    const cell = this.timed[i];
    if (cell === null) return;
    cell.since(this.sentAt[i]);
    this.timed[i] = null;
  }

  /** The reply to `seq` is `buf[start, end)`. Returns true when bytes moved to the output queue. */
  fill(seq: number, buf: Buffer, start: number, end: number): boolean {
    if (seq === this.head && this.outstanding > 0) {
      this.out.append(buf, start, end);
      this.observe(seq & (this.capacity - 1));
      this.head = (seq + 1) & SEQ_MASK;
      this.drainReady();
      return true;
    }
    if (((seq - this.head) & SEQ_MASK) >= this.outstanding) return false; // not owed (already answered)
    const i = seq & (this.capacity - 1);
    this.bufs[i] = buf;
    this.starts[i] = start;
    this.ends[i] = end;
    this.ready[i] = 1;
    return false;
  }

  /** An out-of-band frame (a pub/sub message): straight out when nothing is owed, else after what is. */
  push(buf: Buffer, start: number, end: number): boolean {
    if (this.outstanding === 0) {
      this.out.append(buf, start, end);
      return true;
    }
    return this.fill(this.reserve(), buf, start, end);
  }

  private drainReady(): void {
    const mask = this.capacity - 1;
    while (this.head !== this.tail) {
      const i = this.head & mask;
      if (this.ready[i] === 0) return;
      this.out.append(this.bufs[i], this.starts[i], this.ends[i]);
      this.observe(i);
      this.bufs[i] = EMPTY;
      this.ready[i] = 0;
      this.head = (this.head + 1) & SEQ_MASK;
    }
  }

  private grow(): void {
    const n = this.capacity * 2;
    const bufs = new Array<Buffer>(n).fill(EMPTY);
    const starts = new Int32Array(n);
    const ends = new Int32Array(n);
    const ready = new Uint8Array(n);
    const timed = new Array<LatencyCell | null>(n).fill(null);
    const sentAt = new Float64Array(n);
    for (let seq = this.head; seq !== this.tail; seq = (seq + 1) & SEQ_MASK) {
      const from = seq & (this.capacity - 1);
      const to = seq & (n - 1);
      bufs[to] = this.bufs[from];
      starts[to] = this.starts[from];
      ends[to] = this.ends[from];
      ready[to] = this.ready[from];
      timed[to] = this.timed[from];
      sentAt[to] = this.sentAt[from];
    }
    this.timed = timed;
    this.sentAt = sentAt;
    this.bufs = bufs;
    this.starts = starts;
    this.ends = ends;
    this.ready = ready;
    this.capacity = n;
  }
}
