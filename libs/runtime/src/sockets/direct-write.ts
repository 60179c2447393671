// Writing to a plain TCP socket with one write(2) on its descriptor, bypassing the Writable stream
// layer (its bookkeeping and after-write tick cost more user CPU than a proxy's own work for one
// small reply). Used only while the socket has its handle and nothing waits in the stream, so bytes
// never overtake earlier ones and a descriptor is never used after its socket closed; whatever the
// kernel does not take (or an error) goes through the stream as before.
import { Buffer } from 'node:buffer';
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

type BindingWrite = (fd: number, buf: Buffer, offset: number, length: number, position: null, request: undefined, context: { errno?: number }) => number;

/**
 * The fs binding's writeBuffer, which fs.writeSync calls after checking its arguments (the callers
 * here pass a descriptor and a range within the buffer): read once, as a binding object's
 * properties are looked up generically at every access. fs.writeSync where the binding is not there.
 */
const bindingWrite: BindingWrite | undefined = (() => {
  try {
    const write = (process as unknown as { binding(name: string): { writeBuffer?: unknown } }).binding('fs').writeBuffer;
    return typeof write === 'function' ? (write as BindingWrite) : undefined;
  } catch {
    return undefined;
  }
})();
/** Where the binding reports a failed write(2); replaced after one. */
let writeErrors: { errno?: number } = {};

/** write(2) of `buf[start, start + length)` on `fd`: the bytes the kernel took, or -1 (EAGAIN, a dead connection). */
function writeOnDescriptor(fd: number, buf: Buffer, start: number, length: number): number {
  if (bindingWrite === undefined) {
    try {
      return writeSync(fd, buf, start, length);
    } catch {
      return -1;
    }
  }
  const written = bindingWrite(fd, buf, start, length, null, undefined, writeErrors);
  if (writeErrors.errno === undefined) return written;
  writeErrors = {};
  return -1;
}

/** The parts of a socket's Writable state read before a direct write (one hidden class for every socket's state). */
interface WritableStateView {
  readonly length: number;
  readonly corked: number;
  readonly destroyed: boolean;
  readonly ending: boolean;
}

/**
 * A socket written with write(2) on its descriptor, its Writable state looked up once: a proxy writes to
 * sockets of many hidden classes (accepted, adopted, dialled), so reading `_handle`,
 * `writableLength` and `writableCorked` through the socket at every write were megamorphic
 * property loads, where the states all share one class. `fd` -1 (TLS, not connected): the stream.
 */
export class DirectSocket {
  private readonly state: WritableStateView;

  constructor(
    readonly socket: Socket,
    readonly fd: number,
  ) {
    this.state = (socket as unknown as { _writableState: WritableStateView })._writableState;
  }

  /** Corked by its owner: writes are to be batched in the stream. */
  get corked(): boolean {
    return this.state.corked !== 0;
  }

  get destroyed(): boolean {
    return this.state.destroyed;
  }

  /** Whether a write(2) now keeps the byte order: a descriptor, nothing queued in the stream, not corked, ended or destroyed. */
  private get clear(): boolean {
    const state = this.state;
    return this.fd >= 0 && state.length === 0 && state.corked === 0 && !state.destroyed && !state.ending;
  }

  /** What the kernel takes of `buf[start, end)` now (0 when the stream must write it all). */
  private writeNow(buf: Buffer, start: number, end: number): number {
    if (!this.clear) return 0;
    const written = writeOnDescriptor(this.fd, buf, start, end - start);
    return written < 0 ? 0 : written; // EAGAIN or a dead connection: the stream writes it or reports the error
  }

  /** Writes `buf[start, end)`: what the kernel takes now on the descriptor, the rest through the stream; false when the socket buffers, as socket.write. */
  write(buf: Buffer, start = 0, end = buf.length): boolean {
    const written = this.writeNow(buf, start, end);
    if (written === end - start) return true;
    start += written;
    return this.socket.write(start === 0 && end === buf.length ? buf : buf.subarray(start, end));
  }

  /** `write` for bytes in a buffer reused after the call (a read's scratch): only what the kernel does not take is copied, into the stream. */
  writeCopying(buf: Buffer, n: number): boolean {
    const written = this.writeNow(buf, 0, n);
    if (written === n) return true;
    return this.socket.write(Buffer.from(buf.subarray(written, n)));
  }
}
