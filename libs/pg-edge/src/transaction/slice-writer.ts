// Batches frames for one socket write per tick: adjacent slices of the same read buffer merge back
// into one slice (zero-copy); several pieces on a plain TCP descriptor are gathered into one reused
// scratch and go out with one write(2) (a unit's probe plus its query, a reply's frames from several
// reads), otherwise corked as one writev (DESIGN §5).
import type { Socket } from 'node:net';
import { writeDirect, writeDirectCopying } from '@dbproxy/runtime';

/**
 * Pieces up to this many bytes in all are gathered into GATHER (one copy of small frames costs far
 * less than the stream's writev: a write request, its callback and the after-write tick).
 */
const GATHER_MAX = 16 * 1024;
/** Writes happen synchronously one at a time on the event loop, so one scratch serves every writer. */
const GATHER = Buffer.allocUnsafeSlow(GATHER_MAX);

export class SliceWriter {
  private pieces: Buffer[] = [];
  private pending = 0;
  /** The open tail: the last piece, possibly grown by adjacent slices (materialized lazily). */
  private tail: Buffer | undefined;
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
    if (buf.length === 0) return;
    const tail = this.tail;
    if (tail !== undefined && tail.buffer === buf.buffer && tail.byteOffset + this.tailEnd === buf.byteOffset) {
      this.tailEnd += buf.length;
    } else {
      if (tail !== undefined) this.pieces.push(this.closeTail(tail));
      this.tail = buf;
      this.tailEnd = buf.length;
    }
    this.pending += buf.length;
  }

  /** Moves everything from `other` to the end of this writer. */
  append(other: SliceWriter): void {
    if (other.empty) return;
    for (const piece of other.take()) this.add(piece);
  }

  clear(): void {
    if (this.pieces.length > 0) this.pieces = [];
    this.tail = undefined;
    this.pending = 0;
  }

  /**
   * Writes what was added; returns false when the socket asks the writer to wait for 'drain'. With
   * the socket's descriptor (`fd`, plain TCP), one piece goes out with one write(2) past the stream
   * layer unless the socket is corked or already has bytes queued (writeDirect, @dbproxy/runtime).
   */
  flush(socket: Socket, fd = -1): boolean {
    if (this.pending === 0) return true;
    this.flushed += this.pending;
    if (this.pieces.length === 0 && this.tail !== undefined) {
      // The common case: one slice (or adjacent slices of one read), one write, no arrays.
      const only = this.closeTail(this.tail);
      this.tail = undefined;
      this.pending = 0;
      return socket.destroyed || writeOne(socket, fd, only);
    }
    const total = this.pending;
    const pieces = this.take();
    if (socket.destroyed) return true;
    if (pieces.length === 1) return writeOne(socket, fd, pieces[0] as Buffer);
    if (fd >= 0 && total <= GATHER_MAX && !socket.writableCorked) return writeDirectCopying(socket, fd, gather(pieces), total);
    socket.cork();
    let ok = true;
    for (const piece of pieces) ok = socket.write(piece) && ok;
    socket.uncork();
    return ok;
  }

  private take(): Buffer[] {
    const pieces = this.pieces;
    if (this.tail !== undefined) pieces.push(this.closeTail(this.tail));
    this.pieces = [];
    this.tail = undefined;
    this.pending = 0;
    return pieces;
  }

  private closeTail(tail: Buffer): Buffer {
    return this.tailEnd === tail.length ? tail : Buffer.from(tail.buffer, tail.byteOffset, this.tailEnd);
  }
}

/** Copies `pieces` one after another into GATHER (returned). */
function gather(pieces: readonly Buffer[]): Buffer {
  let at = 0;
  for (const piece of pieces) at += piece.copy(GATHER, at);
  return GATHER;
}

function writeOne(socket: Socket, fd: number, buf: Buffer): boolean {
  return fd >= 0 && !socket.writableCorked ? writeDirect(socket, fd, buf) : socket.write(buf);
}
