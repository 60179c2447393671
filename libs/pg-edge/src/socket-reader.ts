// Reading plain sockets without Node's Readable stream layer (net's documented `onread`): each read
// lands in one shared scratch buffer and is copied out as exactly the bytes received, instead of
// Node allocating 64 KiB per read and pushing it through the stream machinery (DESIGN §5). The
// stream layer was most of the user CPU a proxied query cost.
//
// Accepted sockets come from the runtime as ordinary net.Sockets; their handle is moved into a new
// Socket created with `onread` (as Node's own cluster and child_process code moves handles), and
// the original socket is destroyed when the new one closes, so admission accounting sees the
// close. TLS sockets (and sockets without a handle to move) keep the stream path. pause()/resume()
// work on both (net stops and restarts the handle of an `onread` socket).
import { Socket, type SocketConstructorOpts } from 'node:net';
import { TLSSocket } from 'node:tls';

/** Reads are handled synchronously one at a time on the event loop, so one scratch serves every socket. */
const SCRATCH = Buffer.allocUnsafe(64 * 1024);

/** The internal used here: a socket's libuv stream handle. */
interface StreamHandle {
  readStart(): number;
}
interface WithHandle {
  _handle: StreamHandle | null;
}

export type BytesListener = (chunk: Buffer) => void;

/** The bytes of one read, in their own Buffer (from Node's shared pool below 4 KiB). */
function copyOut(n: number): Buffer {
  const chunk = Buffer.allocUnsafe(n);
  SCRATCH.copy(chunk, 0, 0, n);
  return chunk;
}

/** The `onread` option of net.connect; reads go to `sink`, which may be replaced at any time. */
export class ScratchReader {
  private early: Buffer[] | undefined;
  private target: BytesListener | undefined;

  readonly onread = {
    buffer: SCRATCH,
    callback: (n: number): boolean => {
      const chunk = copyOut(n);
      if (this.target) this.target(chunk);
      else (this.early ??= []).push(chunk);
      return true;
    },
  };

  /** Where reads go from now on (reads that came before any sink are delivered first). */
  set sink(listener: BytesListener) {
    this.target = listener;
    const early = this.early;
    this.early = undefined;
    if (early) for (const chunk of early) listener(chunk);
  }
}

/** True for a socket whose reads can be taken over (plain TCP with a handle). */
export function adoptable(socket: Socket): boolean {
  const handle = (socket as unknown as WithHandle)._handle;
  return !(socket instanceof TLSSocket) && !socket.destroyed && handle !== null && typeof handle?.readStart === 'function';
}

/**
 * Serves an accepted socket's reads to `onBytes` without the stream layer. Returns the socket to
 * use from now on (writes, events, destroy); the original is destroyed when it closes. Bytes the
 * original had buffered are delivered first, on the next microtask. A TLS socket keeps its stream.
 */
export function adoptSocket(socket: Socket, onBytes: BytesListener, allowHalfOpen = false): Socket {
  if (!adoptable(socket)) {
    socket.on('data', onBytes);
    socket.resume();
    return socket;
  }
  const raw = socket as unknown as WithHandle;
  const early: Buffer[] = [];
  for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) early.push(chunk);
  const handle = raw._handle as StreamHandle;
  raw._handle = null;
  const options = { handle, allowHalfOpen, onread: { buffer: SCRATCH, callback: (n: number) => (onBytes(copyOut(n)), true) } } as SocketConstructorOpts;
  const adopted = new Socket(options);
  adopted.once('close', () => socket.destroy());
  if (early.length > 0) queueMicrotask(() => early.forEach(onBytes));
  return adopted;
}
