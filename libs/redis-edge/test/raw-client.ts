// A raw RESP client for tests that need exact bytes: pipelines written in one go, replies read
// back frame by frame, disconnects at chosen moments.
import { connect, type Socket } from 'node:net';
import { decodeReply, encodeCommand, ReplyScanner, type RespValue } from '@dbproxy/resp';

export class RawClient {
  private readonly socket: Socket;
  private readonly scanner = new ReplyScanner();
  private buffer = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      const batch = this.scanner.scan(this.buffer, 0, this.buffer.length);
      for (let i = 0; i < batch.count; i++) this.frames.push(Buffer.from(batch.frame(i)));
      this.buffer = this.buffer.subarray(batch.consumed);
      this.scanner.reset();
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  send(...commands: (readonly (string | Buffer | number)[])[]): void {
    this.socket.write(Buffer.concat(commands.map((c) => encodeCommand(c))));
  }

  writeRaw(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  /** The next `n` reply frames, raw. */
  async frames_(n: number, timeoutMs = 10_000): Promise<Buffer[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.frames.length < n) {
      if (this.closed) throw new Error(`connection closed after ${this.frames.length} of ${n} replies`);
      if (Date.now() > deadline) throw new Error(`timed out after ${this.frames.length} of ${n} replies`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.frames.splice(0, n);
  }

  async replies(n: number, timeoutMs?: number): Promise<RespValue[]> {
    return (await this.frames_(n, timeoutMs)).map((f) => decodeReply(f));
  }

  /** Replies as strings (errors as "-ERR ...", null as null, arrays as arrays). */
  async texts(n: number, timeoutMs?: number): Promise<unknown[]> {
    return (await this.replies(n, timeoutMs)).map(plain);
  }

  /** Every reply that arrives until the server closes the connection (or `timeoutMs` passes). */
  async textsUntilClosed(timeoutMs = 3_000): Promise<unknown[]> {
    await this.waitClosed(timeoutMs);
    return this.frames.splice(0).map((f) => plain(decodeReply(f)));
  }

  async waitClosed(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  close(): void {
    this.socket.destroy();
  }

  /** Half-closes: no more commands, replies still welcome. */
  end(): void {
    this.socket.end();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

export function plain(v: RespValue): unknown {
  switch (v.type) {
    case 'simple':
      return v.value;
    case 'error':
      return `-${v.message}`;
    case 'integer':
      return Number(v.value);
    case 'bulk':
      return v.value.toString();
    case 'null':
      return null;
    case 'array':
    case 'set':
    case 'push':
      return v.items.map(plain);
    case 'map':
      return v.entries.map(([k, val]) => [plain(k), plain(val)]);
    default:
      return JSON.stringify(v);
  }
}
