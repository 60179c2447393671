// The commands a backend connection has sent and still owes replies for, oldest first: a ring of
// parallel arrays, so queuing a command allocates nothing.
import { Buffer } from 'node:buffer';
import type { ReplySink } from './reply-sink';

const EMPTY = Buffer.alloc(0);

export class LinkFifo {
  private capacity = 64;
  private head = 0;
  private size = 0;
  /** Commands queued and replies taken since the connection opened (the reply cache's write fences). */
  pushed = 0;
  shifted = 0;
  owners: (ReplySink | undefined)[] = new Array<ReplySink | undefined>(64).fill(undefined);
  seqs = new Int32Array(64);
  parts = new Int32Array(64);
  flags = new Uint8Array(64);
  attempts = new Uint8Array(64);
  bufs: Buffer[] = new Array<Buffer>(64).fill(EMPTY);
  starts = new Int32Array(64);
  ends = new Int32Array(64);

  get length(): number {
    return this.size;
  }

  push(owner: ReplySink, seq: number, part: number, flags: number, attempt: number, buf: Buffer, start: number, end: number): void {
    if (this.size === this.capacity) this.grow();
    const i = (this.head + this.size) & (this.capacity - 1);
    this.owners[i] = owner;
    this.seqs[i] = seq;
    this.parts[i] = part;
    this.flags[i] = flags;
    this.attempts[i] = attempt > 255 ? 255 : attempt;
    this.bufs[i] = buf;
    this.starts[i] = start;
    this.ends[i] = end;
    this.size++;
    this.pushed++;
  }

  /** Index of the oldest entry (read its fields, then call shift()). */
  peek(): number {
    return this.head;
  }

  shift(): void {
    const i = this.head;
    this.owners[i] = undefined;
    this.bufs[i] = EMPTY;
    this.head = (i + 1) & (this.capacity - 1);
    this.size--;
    this.shifted++;
  }

  /** Removes every entry, calling `each` on the index of each, oldest first. */
  drain(each: (i: number) => void): void {
    while (this.size > 0) {
      const i = this.head;
      each(i);
      this.shift();
    }
  }

  private grow(): void {
    const n = this.capacity * 2;
    const order = (i: number): number => (this.head + i) & (this.capacity - 1);
    const owners = new Array<ReplySink | undefined>(n).fill(undefined);
    const bufs = new Array<Buffer>(n).fill(EMPTY);
    const seqs = new Int32Array(n);
    const parts = new Int32Array(n);
    const flags = new Uint8Array(n);
    const attempts = new Uint8Array(n);
    const starts = new Int32Array(n);
    const ends = new Int32Array(n);
    for (let k = 0; k < this.size; k++) {
      const i = order(k);
      owners[k] = this.owners[i];
      bufs[k] = this.bufs[i];
      seqs[k] = this.seqs[i];
      parts[k] = this.parts[i];
      flags[k] = this.flags[i];
      attempts[k] = this.attempts[i];
      starts[k] = this.starts[i];
      ends[k] = this.ends[i];
    }
    this.owners = owners;
    this.bufs = bufs;
    this.seqs = seqs;
    this.parts = parts;
    this.flags = flags;
    this.attempts = attempts;
    this.starts = starts;
    this.ends = ends;
    this.capacity = n;
    this.head = 0;
  }
}
