// Batches frames for one socket write per tick: adjacent ranges of the same read buffer merge back
// into one range (zero-copy; a relay adds a backend's messages as ranges of the read, no slice per
// message); several pieces on a plain TCP descriptor are gathered into one reused scratch and go
// out with one write(2) (a unit's probe plus its query, a reply's frames from several reads),
// otherwise corked as one writev (DESIGN §5).
import { Buffer } from 'node:buffer';
import type { Frame } from '@dbproxy/protocol-pg';
import type { DirectSocket } from '@dbproxy/runtime';
import { emptyArray as emptyArrayExport } from '@dbproxy/util';
/** Read once: through the packages' CommonJS `export *` every access would be a getter call. */
const emptyArray = emptyArrayExport;

/**
 * Pieces up to this many bytes in all are gathered into GATHER (one copy of small frames costs far
 * less than the stream's writev: a write request, its callback and the after-write tick).
 */
const GATHER_MAX = 16 * 1024;
/** Writes happen synchronously one at a time on the event loop, so one scratch serves every writer. */
const GATHER = Buffer.allocUnsafeSlow(GATHER_MAX);

export class SliceWriter {
  private readonly pieces: Buffer[] = [];
  private pending = 0;
  /** The open tail: `tail[tailStart, tailEnd)`, possibly grown past `tail`'s own view by adjacent ranges of its memory. */
  private tail: Buffer | undefined;
  private tailStart = 0;
  private tailEnd = 0;
  /** Bytes handed to flush() since the writer was made (a session's bytes out). */
  flushed = 0;

  get length(): number {
    return this.pending;
  }

  get empty(): boolean {
    return this.pending === 0;
  }

  add(buf: Buffer): void {
    this.addRange(buf, 0, buf.length);
  }

  /** Adds `buf[start, end)` (kept by reference: the bytes must not change before the flush). */
  addRange(buf: Buffer, start: number, end: number): void {
    if (end <= start) return;
    const tail = this.tail;
    // the same Buffer first: a relay's messages are ranges of one read, and .buffer/.byteOffset are accessor calls
    if (tail !== undefined && ((tail === buf && this.tailEnd === start) || (tail !== buf && tail.buffer === buf.buffer && tail.byteOffset + this.tailEnd === buf.byteOffset + start))) {
      this.tailEnd += end - start;
    } else {
      if (tail !== undefined) this.pieces.push(this.closeTail(tail));
      this.tail = buf;
      this.tailStart = start;
      this.tailEnd = end;
    }
    this.pending += end - start;
  }

  /** Adds a client frame: as a range of its read when it has one (frames of one read then merge without a view each). */
  addFrame(frame: Frame): void {
    const source = frame.source;
    if (source === undefined) this.add(frame.bytes);
    else this.addRange(source, frame.start as number, frame.end as number);
  }

  /** Adds `buf` as a piece of its own (a constant message: nothing after it is adjacent, so the next range is not compared with it). */
  addApart(buf: Buffer): void {
    if (buf.length === 0) return;
    const tail = this.tail;
    if (tail !== undefined) this.pieces.push(this.closeTail(tail));
    this.tail = undefined;
    this.pieces.push(buf);
    this.pending += buf.length;
  }

  /** Moves everything from `other` to the end of this writer. */
  append(other: SliceWriter): void {
    if (other.empty) return;
    const pieces = other.pieces;
    for (let i = 0; i < pieces.length; i++) this.add(pieces[i] as Buffer);
    if (other.tail !== undefined) this.addRange(other.tail, other.tailStart, other.tailEnd);
    other.clear();
  }

  clear(): void {
    emptyArray(this.pieces);
    this.tail = undefined;
    this.pending = 0;
  }

  /**
   * Writes what was added; returns false when the socket asks the writer to wait for 'drain'. On a
   * plain TCP socket one piece goes out with one write(2) past the stream layer unless the socket
   * is corked or already has bytes queued (DirectSocket, @dbproxy/runtime).
   */
  flush(to: DirectSocket): boolean {
    if (this.pending === 0) return true;
    this.flushed += this.pending;
    const tail = this.tail;
    if (this.pieces.length === 0 && tail !== undefined) {
      // The common case: one range (or adjacent ranges of one read), one write, no arrays.
      const start = this.tailStart;
      const end = this.tailEnd;
      this.tail = undefined;
      this.pending = 0;
      if (to.destroyed) return true;
      if (end <= tail.length) return to.write(tail, start, end);
      return to.write(this.rangeOf(tail, start, end));
    }
    const total = this.pending;
    if (tail !== undefined) this.pieces.push(this.closeTail(tail));
    this.tail = undefined;
    this.pending = 0;
    const pieces = this.pieces;
    let ok = true;
    if (to.destroyed) ok = true;
    else if (pieces.length === 1) ok = to.write(pieces[0] as Buffer);
    else if (to.fd >= 0 && total <= GATHER_MAX && !to.corked) ok = to.writeCopying(gather(pieces), total);
    else {
      const socket = to.socket;
      socket.cork();
      for (const piece of pieces) ok = socket.write(piece) && ok;
      socket.uncork();
    }
    emptyArray(pieces);
    return ok;
  }

  private closeTail(tail: Buffer): Buffer {
    return this.rangeOf(tail, this.tailStart, this.tailEnd);
  }

  /** `buf[start, end)` as a Buffer of its own view (`end` may lie past `buf`'s view, inside its memory). */
  private rangeOf(buf: Buffer, start: number, end: number): Buffer {
    return start === 0 && end === buf.length ? buf : Buffer.from(buf.buffer, buf.byteOffset + start, end - start);
  }
}

/** Copies `pieces` one after another into GATHER (returned): TypedArray#set of a whole piece, where Buffer#copy validates and makes a view in JavaScript first. */
function gather(pieces: readonly Buffer[]): Buffer {
  let at = 0;
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] as Buffer;
    GATHER.set(piece, at);
    at += piece.length;
  }
  return GATHER;
}
