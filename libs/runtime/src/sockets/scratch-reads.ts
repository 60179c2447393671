// Reading plain TCP sockets without Node's Readable stream layer (net's documented `onread`): each
// read lands in one shared scratch buffer and is copied out as exactly the bytes received, instead
// of Node allocating 64 KiB per read and pushing it through the stream machinery (DESIGN §5: on the
// edges' proxy paths the stream layer was most of the user CPU a request cost).
//
// Two ways to hand reads over: as their own Buffer (`BytesListener`), or as a range of a shared slab
// (`RangeListener`: no Buffer per read; the reads of one turn lie next to each other, so commands of
// many clients forwarded to one backend connection form one contiguous range). Slab bytes are never
// rewritten; a slab is freed when no range of it is referenced any more.
//
// Accepted sockets come from the runtime as ordinary net.Sockets; their handle is moved into a new
// Socket created with `onread` (as Node's own cluster and child_process code moves handles), and
// the original socket is destroyed when the new one closes, so admission accounting sees the
// close. TLS sockets and sockets without a handle keep the stream path. pause()/resume() work on
// both (net stops and restarts the handle of an `onread` socket).
import { Buffer } from 'node:buffer';
import { Socket, type OnReadOpts, type SocketConstructorOpts } from 'node:net';
import { TLSSocket } from 'node:tls';
import { presentAs, proxiedAddressesOf } from '../proxy-protocol/client-address';

export type BytesListener = (chunk: Buffer) => void;
/** The bytes of one read are `buf[start, end)`, never rewritten afterwards. */
export type RangeListener = (buf: Buffer, start: number, end: number) => void;
/**
 * The bytes of one read are `buf[0, n)`, valid only during the call: the scratch is reused by
 * the next read, so whatever must outlive the call is copied (a relay that writes them on at
 * once copies nothing).
 */
export type RawListener = (buf: Buffer, n: number) => void;

/** Reads are handled synchronously one at a time on the event loop, so one scratch serves every socket. */
const SCRATCH = Buffer.allocUnsafe(64 * 1024);

/** The internal used here: a socket's libuv stream handle. */
interface WithHandle {
  _handle: { readStart(): number } | null;
}

/** Up to this a byte loop copies faster than TypedArray#set (a builtin call of its own). */
const LOOP_COPY_MAX = 16;
/** Reads up to this size share slabs (a slab pins at most SLAB_SIZE for a range kept long, as Node's own pool pins 8 KiB). */
const SLAB_READ = 4 * 1024;
const SLAB_SIZE = 16 * 1024;
let slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
let slabUsed = 0;
/**
 * `SCRATCH[0, n)` as a view, one per length up to SLAB_READ, made on first use: copying a read
 * with `set(view)` then costs one builtin call, where a view per copy (Buffer#copy, subarray) cost
 * as much again and a byte loop about 25 instructions per byte (callgrind).
 */
const SCRATCH_VIEWS: (Buffer | null)[] = Array.from({ length: SLAB_READ + 1 }, () => null); // packed: a sparse array would be a dictionary
const scratchView = (n: number): Buffer => SCRATCH_VIEWS[n] ?? (SCRATCH_VIEWS[n] = SCRATCH.subarray(0, n));

/** Copies the scratch's first `n` bytes to `target` at `at`. */
function copyScratch(n: number, target: Buffer, at: number): void {
  if (n <= LOOP_COPY_MAX) for (let i = 0; i < n; i++) target[at + i] = SCRATCH[i] as number;
  else if (n <= SLAB_READ) target.set(scratchView(n), at);
  else SCRATCH.copy(target, at, 0, n);
}

/** The scratch's first `n` bytes in their own Buffer (from Node's shared pool below 4 KiB). */
function copyOut(n: number): Buffer {
  const chunk = Buffer.allocUnsafe(n);
  copyScratch(n, chunk, 0);
  return chunk;
}

/** Copies the scratch's first `n` bytes into the current slab and hands them over as a range of it. */
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
  copyScratch(n, slab, start);
  slabUsed = start + n;
  onRange(slab, start, start + n);
}

/** `onread` option for net.connect: `onBytes` gets each read as its own Buffer. */
export function onreadBytes(onBytes: BytesListener): OnReadOpts {
  return { buffer: SCRATCH, callback: (n: number) => (onBytes(copyOut(n)), true) };
}

/** `onread` option for net.connect: `onRange` gets each read as a range of a shared slab. */
export function onreadRanges(onRange: RangeListener): OnReadOpts {
  return { buffer: SCRATCH, callback: (n: number) => (deliverRange(n, onRange), true) };
}

/** `onread` option for net.connect: `onRaw` gets each read uncopied in the scratch (RawListener: valid only during the call). */
export function onreadRaw(onRaw: RawListener): OnReadOpts {
  return { buffer: SCRATCH, callback: (n: number) => (onRaw(SCRATCH, n), true) };
}

const drop: BytesListener = () => undefined;

/**
 * The `onread` option of a socket whose reads change hands (a backend connection: handshake, then
 * whoever holds it). Reads that arrive before any sink are held and delivered to the first sink;
 * after `release()` reads are dropped until the next sink.
 */
export class ByteReader {
  private early: Buffer[] | undefined;
  private target: BytesListener | undefined;
  private raw: RawListener | undefined;

  readonly onread: OnReadOpts = {
    buffer: SCRATCH,
    callback: (n: number): boolean => {
      if (this.raw) {
        this.raw(SCRATCH, n);
        return true;
      }
      const chunk = copyOut(n);
      if (this.target) this.target(chunk);
      else (this.early ??= []).push(chunk);
      return true;
    },
  };

  /** Where reads go from now on (reads held since before any sink are delivered first). */
  set sink(listener: BytesListener) {
    this.raw = undefined;
    this.target = listener;
    const early = this.early;
    this.early = undefined;
    if (early) for (const chunk of early) listener(chunk);
  }

  /** Where reads go from now on, uncopied (reads held since before any sink are delivered first). */
  set rawSink(listener: RawListener) {
    this.raw = listener;
    const early = this.early;
    this.early = undefined;
    if (early) for (const chunk of early) listener(chunk, chunk.length);
  }

  /** Reads arriving from now on are dropped (nobody owns the socket). */
  release(): void {
    this.raw = undefined;
    this.target = drop;
  }
}

/** True for a socket whose reads can be taken over (plain TCP with a live handle). */
export function adoptable(socket: Socket): boolean {
  const handle = (socket as unknown as WithHandle)._handle;
  return !(socket instanceof TLSSocket) && !socket.destroyed && handle !== null && typeof handle?.readStart === 'function';
}

function adopt(socket: Socket, onread: OnReadOpts, deliverEarly: (chunk: Buffer) => void, allowHalfOpen: boolean): Socket {
  const raw = socket as unknown as WithHandle;
  const early: Buffer[] = [];
  for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) early.push(chunk);
  const handle = raw._handle;
  raw._handle = null;
  const adopted = new Socket({ handle, allowHalfOpen, onread } as SocketConstructorOpts);
  const proxied = proxiedAddressesOf(socket);
  if (proxied) presentAs(adopted, proxied);
  adopted.once('close', () => socket.destroy());
  if (early.length > 0) queueMicrotask(() => early.forEach(deliverEarly));
  return adopted;
}

/**
 * Serves an accepted socket's reads to `onBytes` without the stream layer. Returns the socket to
 * use from now on (writes, events, destroy; the original is destroyed when it closes), or null
 * when the socket cannot be adopted (then nothing changed). Bytes the stream already buffered are
 * handed over first, in a microtask, once the caller holds the new socket.
 */
export function adoptSocket(socket: Socket, onBytes: BytesListener, allowHalfOpen = socket.allowHalfOpen): Socket | null {
  if (!adoptable(socket)) return null;
  return adopt(socket, onreadBytes(onBytes), onBytes, allowHalfOpen);
}

/** adoptSocket with each read handed over uncopied (RawListener); null when the socket cannot be adopted. */
export function adoptSocketRaw(socket: Socket, onRaw: RawListener, allowHalfOpen = socket.allowHalfOpen): Socket | null {
  if (!adoptable(socket)) return null;
  return adopt(socket, onreadRaw(onRaw), (chunk) => onRaw(chunk, chunk.length), allowHalfOpen);
}

/** adoptSocket, or the stream path ('data' events) for a socket that cannot be adopted. */
export function readSocket(socket: Socket, onBytes: BytesListener, allowHalfOpen = socket.allowHalfOpen): Socket {
  const adopted = adoptSocket(socket, onBytes, allowHalfOpen);
  if (adopted) return adopted;
  socket.allowHalfOpen = allowHalfOpen;
  socket.on('data', onBytes);
  socket.resume();
  return socket;
}

/** readSocket with reads handed over as slab ranges (stream chunks as whole ranges on the stream path). */
export function readSocketRanges(socket: Socket, onRange: RangeListener, allowHalfOpen = socket.allowHalfOpen): Socket {
  const whole = (chunk: Buffer) => onRange(chunk, 0, chunk.length);
  if (adoptable(socket)) return adopt(socket, onreadRanges(onRange), whole, allowHalfOpen);
  socket.allowHalfOpen = allowHalfOpen;
  socket.on('data', whole);
  socket.resume();
  return socket;
}
