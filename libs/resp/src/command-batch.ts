// The result of one CommandScanner.scan: complete commands as struct-of-arrays offsets.
import { Buffer } from 'node:buffer';
import { argEquals, argToBuffer, argToInt, argToString } from './args';
import { CommandFlag } from './wire';

const EMPTY = Buffer.alloc(0);

function grown<T extends Int32Array | Uint8Array>(old: T, make: (n: number) => T): T {
  const next = make(old.length * 2);
  next.set(old);
  return next;
}

/**
 * Complete commands found by the last scan, valid until the scanner's next `scan` call.
 * Command `i` occupies `buffer.subarray(frameStart[i], frameEnd[i])` and has `argCount[i]`
 * arguments; argument `k` is `argLength[j]` bytes at `argOffset[j]` of `source(i)`, with
 * `j = argFirst[i] + k`. Callers read the arrays; only the scanner writes them.
 */
export class CommandBatch {
  count = 0;
  /** Where the next scan must start: the end of the last complete (or skipped empty) frame. */
  consumed = 0;
  /** The buffer the last scan read. */
  buffer: Buffer = EMPTY;
  frameStart: Int32Array = new Int32Array(16);
  frameEnd: Int32Array = new Int32Array(16);
  argFirst: Int32Array = new Int32Array(16);
  argCount: Int32Array = new Int32Array(16);
  flags: Uint8Array = new Uint8Array(16);
  argOffset: Int32Array = new Int32Array(64);
  argLength: Int32Array = new Int32Array(64);
  /** Arguments stored so far, including those of a pending (incomplete) command. */
  argTotal = 0;
  private readonly decoded: Array<Buffer | undefined> = [];

  /** The buffer that command `i`'s argument offsets refer to. */
  source(i: number): Buffer {
    return (this.flags[i] & CommandFlag.Decoded) !== 0 ? (this.decoded[i] as Buffer) : this.buffer;
  }

  /** The command's exact bytes, to forward unchanged (a view, no copy). */
  frame(i: number): Buffer {
    return this.buffer.subarray(this.frameStart[i], this.frameEnd[i]);
  }

  isInline(i: number): boolean {
    return (this.flags[i] & CommandFlag.Inline) !== 0;
  }

  offset(i: number, k: number): number {
    return this.argOffset[this.argFirst[i] + k];
  }

  length(i: number, k: number): number {
    return this.argLength[this.argFirst[i] + k];
  }

  /** Argument `k` of command `i` equals ASCII `name`, ignoring case (`argEquals(i, 0, 'GET')`). */
  argEquals(i: number, k: number, name: string): boolean {
    const j = this.argFirst[i] + k;
    return argEquals(this.source(i), this.argOffset[j], this.argLength[j], name);
  }

  argToString(i: number, k: number, encoding: BufferEncoding = 'utf8'): string {
    const j = this.argFirst[i] + k;
    return argToString(this.source(i), this.argOffset[j], this.argLength[j], encoding);
  }

  argToBuffer(i: number, k: number): Buffer {
    const j = this.argFirst[i] + k;
    return argToBuffer(this.source(i), this.argOffset[j], this.argLength[j]);
  }

  argToInt(i: number, k: number): number {
    const j = this.argFirst[i] + k;
    return argToInt(this.source(i), this.argOffset[j], this.argLength[j]);
  }

  /** All arguments of command `i` as Buffer views (allocates; for tests and slow paths). */
  args(i: number): Buffer[] {
    const out: Buffer[] = [];
    for (let k = 0; k < this.argCount[i]; k++) out.push(this.argToBuffer(i, k));
    return out;
  }

  /** Starts a scan of `buffer`, keeping the `pendingArgs` stored from `pendingFirst` at index 0. */
  begin(buffer: Buffer, pendingFirst: number, pendingArgs: number): void {
    this.buffer = buffer;
    this.count = 0;
    if (pendingFirst !== 0 && pendingArgs !== 0) {
      this.argOffset.copyWithin(0, pendingFirst, pendingFirst + pendingArgs);
      this.argLength.copyWithin(0, pendingFirst, pendingFirst + pendingArgs);
    }
    this.argTotal = pendingArgs;
  }

  pushArg(offset: number, length: number): void {
    const j = this.argTotal;
    if (j === this.argOffset.length) {
      this.argOffset = grown(this.argOffset, (n) => new Int32Array(n));
      this.argLength = grown(this.argLength, (n) => new Int32Array(n));
    }
    this.argOffset[j] = offset;
    this.argLength[j] = length;
    this.argTotal = j + 1;
  }

  pushCommand(start: number, end: number, argFirst: number, flags: number, decoded?: Buffer): void {
    const i = this.count;
    if (i === this.frameStart.length) this.growCommands();
    this.frameStart[i] = start;
    this.frameEnd[i] = end;
    this.argFirst[i] = argFirst;
    this.argCount[i] = this.argTotal - argFirst;
    this.flags[i] = flags;
    if (decoded !== undefined) this.decoded[i] = decoded;
    this.count = i + 1;
  }

  private growCommands(): void {
    const int32 = (n: number): Int32Array => new Int32Array(n);
    this.frameStart = grown(this.frameStart, int32);
    this.frameEnd = grown(this.frameEnd, int32);
    this.argFirst = grown(this.argFirst, int32);
    this.argCount = grown(this.argCount, int32);
    this.flags = grown(this.flags, (n) => new Uint8Array(n));
  }
}
