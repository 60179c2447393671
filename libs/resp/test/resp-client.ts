// A minimal RESP client for integration tests, built only from this library over node:net.
import { connect, type Socket } from 'node:net';
import { InputBuffer, ReplyScanner } from '../src';

/** Sends raw bytes and collects reply frames (as views of what arrived) with the ReplyScanner. */
export class RespClient {
  readonly frames: Buffer[] = [];
  /** ReplyFlag bits the scanner reported for each frame. */
  readonly flags: number[] = [];
  readonly received: Buffer[] = [];
  chunks = 0;
  private readonly input = new InputBuffer(256);
  private readonly scanner = new ReplyScanner();
  private closed = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', (err) => {
      this.failure = err;
      this.wake?.();
    });
  }

  static connect(port = 6379, host = '127.0.0.1'): Promise<RespClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host }, () => resolve(new RespClient(socket)));
      socket.once('error', reject);
    });
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Resolves with the next `n` frames once they have all arrived. */
  async next(n: number, timeoutMs = 5000): Promise<Buffer[]> {
    const wanted = this.taken + n;
    await this.until(() => this.frames.length >= wanted, timeoutMs, `${n} replies`);
    const out = this.frames.slice(this.taken, wanted);
    this.taken = wanted;
    return out;
  }

  /** Resolves once the server has closed the connection. */
  async closedByServer(timeoutMs = 5000): Promise<void> {
    await this.until(() => this.closed, timeoutMs, 'the server to close the connection');
  }

  close(): void {
    this.socket.destroy();
  }

  private taken = 0;

  private onData(chunk: Buffer): void {
    this.chunks++;
    this.received.push(chunk);
    this.input.append(chunk, this.scanner.needBytes);
    const batch = this.scanner.scan(this.input.buffer, this.input.start, this.input.end);
    // Views stay valid: InputBuffer never rewrites bytes before its end.
    for (let i = 0; i < batch.count; i++) {
      this.frames.push(batch.frame(i));
      this.flags.push(batch.flags[i]);
    }
    this.input.consume(batch.consumed);
    this.wake?.();
  }

  private until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const check = (): void => {
        if (this.failure) reject(this.failure);
        else if (done()) resolve();
        else if (this.closed) reject(new Error(`connection closed while waiting for ${what}`));
        else return;
        clearTimeout(timer);
        this.wake = undefined;
      };
      this.wake = check;
      check();
    });
  }
}
