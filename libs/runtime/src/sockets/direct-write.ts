// Writing to a plain TCP socket with one write(2) on its descriptor, bypassing the Writable stream
// layer (its bookkeeping and after-write tick cost more user CPU than a proxy's own work for one
// small reply). Used only while the socket has its handle and nothing waits in the stream, so bytes
// never overtake earlier ones and a descriptor is never used after its socket closed; whatever the
// kernel does not take (or an error) goes through the stream as before.
import { writeSync } from 'node:fs';
import type { Socket } from 'node:net';

/** The internal used here: a connected socket's libuv handle and its descriptor. */
interface WithHandle {
  _handle: { fd?: number } | null;
}

/** The socket's descriptor (-1: none, e.g. not connected yet or a TLS socket); it does not change while the handle lives. */
export function descriptorOf(socket: Socket): number {
  const fd = (socket as unknown as WithHandle)._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : -1;
}

/** What the kernel takes of `buf[start, end)` now, written on the descriptor (0 when the stream must write it all). */
function writeNow(socket: Socket, fd: number, buf: Buffer, start: number, end: number): number {
  if (fd < 0 || (socket as unknown as WithHandle)._handle === null || socket.writableLength !== 0) return 0;
  try {
    return writeSync(fd, buf, start, end - start);
  } catch {
    // EAGAIN (the socket buffer is full) or a dead connection: the stream writes it or reports the error.
    return 0;
  }
}

/** Writes `buf[start, end)` to `socket` (descriptor `fd`, or -1 for the stream path); false when the socket buffers, as socket.write. */
export function writeDirect(socket: Socket, fd: number, buf: Buffer, start = 0, end = buf.length): boolean {
  const written = writeNow(socket, fd, buf, start, end);
  if (written === end - start) return true;
  start += written;
  return socket.write(start === 0 && end === buf.length ? buf : buf.subarray(start, end));
}

/**
 * writeDirect for bytes in a buffer that is reused after the call (a read's scratch): what the
 * kernel takes is written from it as is, and only what it does not take is copied into the stream.
 */
export function writeDirectCopying(socket: Socket, fd: number, buf: Buffer, n: number): boolean {
  const written = writeNow(socket, fd, buf, 0, n);
  if (written === n) return true;
  return socket.write(Buffer.from(buf.subarray(written, n)));
}
