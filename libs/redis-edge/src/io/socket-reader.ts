// Reading sockets without Node's Readable stream layer (net's documented `onread`): each read
// lands in one shared scratch buffer and is copied out as exactly the bytes received, instead of
// Node allocating 64 KiB per read and pushing it through the stream machinery. Measured on this
// project's proxy path, the stream layer is most of the user CPU a request costs.
//
// Small reads are copied into a shared slab and handed over as a range of it (no Buffer per read):
// the reads of one turn lie next to each other, so commands of many clients forwarded to one
// backend connection form one contiguous range and leave in one write without being copied again.
// Slab bytes are never rewritten; a slab is freed when no range of it is referenced any more.
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
/** The bytes of one read are `buf[start, end)`, never rewritten afterwards. */
export type RangeListener = (buf: Buffer, start: number, end: number) => void;

/** Reads up to this size share slabs (a slab pins at most SLAB_SIZE for a range kept long, as Node's own pool pins 8 KiB). */
const SLAB_READ = 4 * 1024;
const SLAB_SIZE = 16 * 1024;
/** Short reads (a command, a reply) are copied byte by byte: Buffer#copy of part of a buffer allocates a view first. */
const BYTEWISE_COPY = 128;
let slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
let slabUsed = 0;

function copyOut(n: number): Buffer {
  const chunk = Buffer.allocUnsafe(n); // pooled below 4 KiB
  SCRATCH.copy(chunk, 0, 0, n);
  return chunk;
}

/** Copies the scratch's first `n` bytes out and hands them to `onRange`. */
function deliverRange(n: number, onRange: RangeListener): void {
  if (n > SLAB_READ) {
    onRange(copyOut(n), 0, n);
    return;
  }
  if (slabUsed + n > SLAB_SIZE) {
    slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
    slabUsed = 0;
  }
  const start = slabUsed;
  if (n <= BYTEWISE_COPY) for (let i = 0; i < n; i++) slab[start + i] = SCRATCH[i];
  else SCRATCH.copy(slab, start, 0, n);
  slabUsed = start + n;
  onRange(slab, start, start + n);
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

/** `onread` options for net.connect: `onRange` gets each read as a range of a shared slab. */
export function onreadRanges(onRange: RangeListener): { buffer: Buffer; callback: (n: number) => boolean } {
  return {
    buffer: SCRATCH,
    callback: (n: number) => {
      deliverRange(n, onRange);
      return true;
    },
  };
}

/**
 * Serves an accepted socket's reads to `onBytes` without the stream layer. Returns the socket to
 * use from now on (writes, events, destroy); the original is destroyed when it closes.
 */
export function adoptSocket(socket: Socket, onRange: RangeListener, allowHalfOpen: boolean): Socket {
  const raw = socket as unknown as WithHandle;
  const handle = raw._handle;
  if (!handle || typeof handle.readStart !== 'function') return streamFallback(socket, onRange, allowHalfOpen);
  const early = socket.readableLength > 0 ? (socket.read() as Buffer | null) : null;
  raw._handle = null;
  const options = { handle, allowHalfOpen, onread: onreadRanges(onRange) } as SocketConstructorOpts;
  const adopted = new Socket(options);
  adopted.once('close', () => socket.destroy());
  if (early && early.length > 0) queueMicrotask(() => onRange(early, 0, early.length));
  return adopted;
}

function streamFallback(socket: Socket, onRange: RangeListener, allowHalfOpen: boolean): Socket {
  socket.allowHalfOpen = allowHalfOpen;
  socket.on('data', (chunk: Buffer) => onRange(chunk, 0, chunk.length));
  return socket;
}
