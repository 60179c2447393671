// Reading plain TCP sockets without Node's Readable stream layer (net's documented `onread`): each
// read lands in one shared scratch buffer and is copied out as exactly the bytes received, instead
// of Node allocating 64 KiB per read and pushing it through the stream machinery (as redis-edge).
//
// Backend sockets are created with `onread` (their bytes go to whoever holds the ByteReader: the
// handshake, then the BackendConnection). Client sockets come from the runtime as ordinary
// net.Sockets; once a plain (non-TLS) login is done, their handle is moved into a new Socket
// created with `onread` (as Node's own cluster code moves handles) and the original socket is
// destroyed when the new one closes, so admission accounting sees the close. pause()/resume()
// work on both (net stops and restarts the handle for `onread` sockets).
import { Socket, type OnReadOpts, type SocketConstructorOpts } from 'node:net';

/** Reads are processed synchronously one at a time on the event loop, so one scratch serves every socket. */
const SCRATCH = Buffer.allocUnsafe(64 * 1024);

export type BytesListener = (chunk: Buffer) => void;

/** The internal used here: a socket's libuv stream handle. */
interface WithHandle {
  _handle: { readStart(): number } | null;
}

/** Below this a byte loop copies faster than Buffer#copy (which makes a view per call). */
const LOOP_COPY_MAX = 256;

function copyOut(n: number): Buffer {
  const chunk = Buffer.allocUnsafe(n); // pooled below 4 KiB
  if (n > LOOP_COPY_MAX) SCRATCH.copy(chunk, 0, 0, n);
  else for (let i = 0; i < n; i++) chunk[i] = SCRATCH[i] as number;
  return chunk;
}

const ignore: BytesListener = () => undefined;

/** Where a socket's reads go; the listener can be swapped as the socket changes hands. */
export class ByteReader {
  listener: BytesListener = ignore;
  readonly onread: OnReadOpts = {
    buffer: SCRATCH,
    callback: (n: number): boolean => {
      this.listener(copyOut(n));
      return true;
    },
  };

  /** Reads arriving from now on are dropped (nobody owns the socket yet). */
  release(): void {
    this.listener = ignore;
  }
}

/**
 * Serves an accepted socket's reads to `onBytes` without the stream layer. Returns the socket to
 * use from now on (writes, events, destroy), or null when the socket has no handle to move (then
 * nothing changed). Bytes the stream already buffered are handed over first (in a microtask, once
 * the caller holds the new socket).
 */
export function adoptSocket(socket: Socket, onBytes: BytesListener): Socket | null {
  const raw = socket as unknown as WithHandle;
  const handle = raw._handle;
  if (!handle || typeof handle.readStart !== 'function' || socket.destroyed) return null;
  const early = socket.readableLength > 0 ? (socket.read() as Buffer | null) : null;
  raw._handle = null;
  const reader = new ByteReader();
  reader.listener = onBytes;
  const options = { handle, allowHalfOpen: socket.allowHalfOpen, onread: reader.onread } as SocketConstructorOpts;
  const adopted = new Socket(options);
  adopted.once('close', () => socket.destroy());
  if (early && early.length > 0) queueMicrotask(() => onBytes(early));
  return adopted;
}
