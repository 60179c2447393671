// Reading sockets without Node's Readable stream layer (net's documented `onread`): each read
// lands in one shared scratch buffer and is copied out as exactly the bytes received, instead of
// Node allocating 64 KiB per read and pushing it through the stream machinery. Measured on this
// project's proxy path, the stream layer is most of the user CPU a request costs.
//
// Accepted sockets come from the runtime as ordinary net.Sockets; their handle is moved into a new
// Socket created with `onread` (as Node's own cluster and child_process code moves handles), and
// the original socket is destroyed when the new one closes, so admission accounting sees the
// close. Without a handle to move the stream path is used. pause()/resume() work on both (net
// stops and restarts the handle for `onread` sockets).
import { Socket, type SocketConstructorOpts } from 'node:net';

/** Reads are processed synchronously one at a time on the event loop, so one scratch serves every socket. */
const SCRATCH = Buffer.allocUnsafe(64 * 1024);

/** The internal used here: a socket's libuv stream handle. */
interface StreamHandle {
  readStart(): number;
}
interface WithHandle {
  _handle: StreamHandle | null;
}

export type BytesListener = (chunk: Buffer) => void;

function copyOut(n: number): Buffer {
  const chunk = Buffer.allocUnsafe(n); // pooled below 4 KiB
  SCRATCH.copy(chunk, 0, 0, n);
  return chunk;
}

/** `onread` options for net.connect: `onBytes` gets each read as its own Buffer. */
export function onreadOptions(onBytes: BytesListener): { buffer: Buffer; callback: (n: number) => boolean } {
  return {
    buffer: SCRATCH,
    callback: (n: number) => {
      onBytes(copyOut(n));
      return true;
    },
  };
}

/**
 * Serves an accepted socket's reads to `onBytes` without the stream layer. Returns the socket to
 * use from now on (writes, events, destroy); the original is destroyed when it closes.
 */
export function adoptSocket(socket: Socket, onBytes: BytesListener, allowHalfOpen: boolean): Socket {
  const raw = socket as unknown as WithHandle;
  const handle = raw._handle;
  if (!handle || typeof handle.readStart !== 'function') return streamFallback(socket, onBytes, allowHalfOpen);
  const early = socket.readableLength > 0 ? (socket.read() as Buffer | null) : null;
  raw._handle = null;
  const options = { handle, allowHalfOpen, onread: onreadOptions(onBytes) } as SocketConstructorOpts;
  const adopted = new Socket(options);
  adopted.once('close', () => socket.destroy());
  if (early && early.length > 0) queueMicrotask(() => onBytes(early));
  return adopted;
}

function streamFallback(socket: Socket, onBytes: BytesListener, allowHalfOpen: boolean): Socket {
  socket.allowHalfOpen = allowHalfOpen;
  socket.on('data', onBytes);
  return socket;
}
