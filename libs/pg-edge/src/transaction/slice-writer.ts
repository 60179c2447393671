// Batches frames for one socket write per tick: adjacent slices of the same read buffer merge back
// into one slice (zero-copy), several pieces go out corked as one writev (DESIGN §5).
import type { Socket } from 'node:net';

export class SliceWriter {
  private pieces: Buffer[] = [];
  private pending = 0;

  get length(): number {
    return this.pending;
  }

  get empty(): boolean {
    return this.pieces.length === 0;
  }

  add(buf: Buffer): void {
    const n = this.pieces.length;
    if (n > 0) {
      const last = this.pieces[n - 1];
      if (last.buffer === buf.buffer && last.byteOffset + last.length === buf.byteOffset) {
        this.pieces[n - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + buf.length);
        this.pending += buf.length;
        return;
      }
    }
    this.pieces.push(buf);
    this.pending += buf.length;
  }

  /** Moves everything from `other` to the end of this writer. */
  append(other: SliceWriter): void {
    for (const piece of other.pieces) this.add(piece);
    other.clear();
  }

  clear(): void {
    if (this.pieces.length > 0) this.pieces = [];
    this.pending = 0;
  }

  /** Writes what was added; returns false when the socket asks the writer to wait for 'drain'. */
  flush(socket: Socket): boolean {
    const pieces = this.pieces;
    if (pieces.length === 0) return true;
    this.pieces = [];
    this.pending = 0;
    if (socket.destroyed) return true;
    if (pieces.length === 1) return socket.write(pieces[0]);
    socket.cork();
    let ok = true;
    for (const piece of pieces) ok = socket.write(piece) && ok;
    socket.uncork();
    return ok;
  }
}
