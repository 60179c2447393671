// Frames from a transaction-mode client: awaited one by one during authentication, then pushed to
// the session as they arrive, with the socket paused while too many bytes wait unprocessed. A
// plain client socket is read without the stream layer (readSocket, @dbproxy/runtime).
import type { Socket } from 'node:net';
import { PgFramer, type Frame } from '@dbproxy/protocol-pg';
import { readSocket } from '@dbproxy/runtime';

export interface InboxHandler {
  onFrame(frame: Frame): void;
  onChunkEnd(): void;
  onClosed(err: Error | undefined): void;
}

export class ClientInbox {
  private readonly framer: PgFramer;
  private readonly queue: Frame[] = [];
  private waiter: ((frame: Frame | undefined) => void) | undefined;
  private handler: InboxHandler | undefined;
  private closed = false;
  /** Whether the socket may be stopped (by pause(), or never resumed yet): resume() is a no-op otherwise, as it runs after every unit. */
  private paused = true;
  private failure: Error | undefined;
  /** The client's socket from now on (for writes too): the accepted one may have been adopted. */
  readonly socket: Socket;

  constructor(accepted: Socket, remainder: Buffer, maxMessageSize: number) {
    this.framer = new PgFramer({ phase: 'typed', peer: 'frontend', maxMessageSize });
    const socket = readSocket(accepted, (chunk) => this.push(chunk));
    this.socket = socket;
    socket.once('close', () => this.end(undefined));
    socket.on('error', (err) => this.end(err));
    // Bytes the accepted socket still held are delivered on a microtask, after these.
    if (remainder.length > 0) this.push(remainder);
  }

  /** The next frame, or undefined when the client went away or sent garbage (see `error`). */
  next(): Promise<Frame | undefined> {
    const frame = this.queue.shift();
    if (frame) return Promise.resolve(frame);
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  get error(): Error | undefined {
    return this.failure;
  }

  /** From now on frames go straight to `handler` (queued ones first). */
  deliverTo(handler: InboxHandler): void {
    this.handler = handler;
    for (let frame = this.queue.shift(); frame; frame = this.queue.shift()) handler.onFrame(frame);
    handler.onChunkEnd();
    if (this.closed) handler.onClosed(this.failure);
  }

  pause(): void {
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    if (this.closed || !this.paused) return;
    this.paused = false;
    this.socket.resume();
  }

  private push(chunk: Buffer): void {
    try {
      this.framer.push(chunk, this.deliverFrame);
    } catch (err) {
      this.end(err instanceof Error ? err : new Error(String(err)));
      this.socket.pause();
      return;
    }
    this.handler?.onChunkEnd();
  }

  private readonly deliverFrame = (frame: Frame): void => this.deliver(frame);

  private deliver(frame: Frame): void {
    if (this.handler) return this.handler.onFrame(frame);
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) waiter(frame);
    else this.queue.push(frame);
  }

  private end(err: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.failure ??= err;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(undefined);
    this.handler?.onClosed(this.failure);
  }
}
