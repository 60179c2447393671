// One pipelined connection to a backend node: commands are queued as views of the client's
// bytes and written once per turn; replies are matched to their senders in FIFO order and
// handed over as views of this connection's read buffer.
import type { Socket } from 'node:net';
import { InputBuffer, redirectOfReply, ReplyFlag, ReplyScanner, type ReplyBatch, type RespLimits } from '@dbproxy/resp';
import { errorMessage } from '@dbproxy/util';
import { RedisEdgeErrors } from '../errors';
import type { NodeEndpoint } from './endpoint';
import { descriptorOf, DirectSocket, onreadRanges, StateMachine } from '@dbproxy/runtime';
import { dialBackend, TLS_FILES_UNREADABLE } from './dial';
import { LinkFifo } from './link-fifo';
import { OutputQueue } from './output-queue';
import { SendFlag, type ReplySink } from './reply-sink';
import type { Flushable, TickFlusher } from './tick-flusher';

export type LinkState = 'idle' | 'connecting' | 'handshaking' | 'ready' | 'closed';

const LEGAL: Readonly<Record<LinkState, readonly LinkState[]>> = {
  idle: ['connecting', 'closed'],
  connecting: ['handshaking', 'ready', 'closed'],
  handshaking: ['ready', 'closed'],
  ready: ['closed'],
  closed: [],
};

/** Receives every frame of a connection in push mode (pub/sub), instead of FIFO matching. */
export interface FrameSink {
  onFrame(link: BackendLink, buf: Buffer, start: number, end: number, flags: number): void;
  onLinkClosed(link: BackendLink, err: Error): void;
}

export interface LinkOptions {
  readonly connectTimeoutMs: number;
  readonly limits: Partial<RespLimits>;
  readonly flusher: TickFlusher;
  /** Called once when the link opens and once when it closes (gauges). */
  readonly onOpenChange?: (link: BackendLink, open: boolean) => void;
  /** Called after each read's replies were handed over (the replies can leave for clients now). */
  readonly afterRead?: () => void;
}

export class BackendLink implements Flushable {
  flushQueued = false;
  readonly fifo = new LinkFifo();
  /** Time of the last reply (or of the first command sent to an idle link), for command timeouts. */
  lastProgress = 0;
  /** A blocking command may hold it for long: no command timeout. */
  blocking = false;
  /** Called once when the link is closed, after pending senders were failed. */
  onClosed: ((link: BackendLink, err: Error) => void) | undefined;
  private readonly out = new OutputQueue();
  private readonly input = new InputBuffer();
  private readonly scanner: ReplyScanner;
  private readonly machine = new StateMachine<LinkState>('redis-backend-link', 'idle', LEGAL);
  private socket: Socket | undefined;
  /** The socket's descriptor once connected (written directly: DirectSocket, @dbproxy/runtime). */
  private fd = -1;
  /** The connected socket for direct writes (DirectSocket: its stream state read once). */
  private direct: DirectSocket | undefined;
  private setupLeft = 0;
  private closeError: Error | undefined;
  /** TLS: written through the stream, never the descriptor. */
  private secure = false;

  constructor(
    readonly endpoint: NodeEndpoint,
    private readonly setup: readonly Buffer[],
    private readonly options: LinkOptions,
    private readonly frameSink?: FrameSink,
  ) {
    this.scanner = new ReplyScanner(options.limits);
  }

  get state(): LinkState {
    return this.machine.state;
  }

  get closed(): boolean {
    return this.machine.is('closed');
  }

  /** Replies still owed. */
  get pending(): number {
    return this.fifo.length;
  }

  /** Queues a command (`buf[start, end)`) whose reply goes to `owner` as (seq, part). */
  send(owner: ReplySink, seq: number, part: number, flags: number, attempt: number, buf: Buffer, start: number, end: number): void {
    if (this.closeError) {
      owner.fail(seq, part, this.closeError);
      return;
    }
    if (this.fifo.length === 0) this.lastProgress = Date.now();
    this.fifo.push(owner, seq, part, flags, attempt, buf, start, end);
    this.out.append(buf, start, end);
    if (this.machine.is('ready')) this.options.flusher.schedule(this);
    else if (this.machine.is('idle')) this.open();
  }

  /** Push mode: queues bytes with no FIFO entry (replies arrive through the frame sink). */
  write(frame: Buffer): void {
    if (this.closeError) return;
    this.out.appendBuffer(frame);
    if (this.machine.is('ready')) this.options.flusher.schedule(this);
    else if (this.machine.is('idle')) this.open();
  }

  flush(): void {
    if (this.direct && this.machine.is('ready') && !this.out.empty) this.out.writeTo(this.direct);
  }

  /** Pauses or resumes reading (push mode toward a slow subscriber). */
  setReading(on: boolean): void {
    if (!this.socket) return;
    if (on) this.socket.resume();
    else this.socket.pause();
  }

  /** Closes the connection; senders still waiting get `err`. */
  close(err: Error, reason = err.message): void {
    if (this.closeError) return;
    const from = this.machine.state;
    this.closeError = err;
    this.machine.transition(from, 'closed', reason);
    if (this.socket) {
      this.socket.destroy();
      if (from !== 'connecting') this.options.onOpenChange?.(this, false);
    }
    this.out.clear();
    this.fifo.drain((i) => {
      const owner = this.fifo.owners[i];
      if (owner && (this.fifo.flags[i] & SendFlag.Skip) === 0) owner.fail(this.fifo.seqs[i], this.fifo.parts[i], err);
    });
    this.frameSink?.onLinkClosed(this, err);
    this.onClosed?.(this, err);
  }

  private open(): void {
    this.machine.transition('idle', 'connecting', 'first command');
    let dialed;
    try {
      dialed = dialBackend(this.endpoint.address, {
        tls: this.endpoint.tls,
        onread: onreadRanges((buf, start, end) => this.received(buf, start, end)),
        onData: (chunk) => this.received(chunk, 0, chunk.length),
      });
    } catch (err) {
      queueMicrotask(() => this.close(RedisEdgeErrors.backendConnect(this.endpoint.name, `${this.endpoint.address}: ${TLS_FILES_UNREADABLE}`), `tls files: ${errorMessage(err)}`));
      return;
    }
    const socket = dialed.socket;
    this.socket = socket;
    this.secure = dialed.secure;
    socket.setTimeout(this.options.connectTimeoutMs);
    socket.once('timeout', () => this.close(RedisEdgeErrors.backendConnect(this.endpoint.name, `${this.endpoint.address}: timed out`), 'connect timeout'));
    socket.once(dialed.readyEvent, () => this.connected());
    socket.on('error', (err) => this.lost(err));
    socket.once('close', () => this.lost(undefined));
  }

  private connected(): void {
    const socket = this.socket as Socket;
    this.fd = this.secure ? -1 : descriptorOf(socket);
    this.direct = new DirectSocket(socket, this.fd);
    this.options.onOpenChange?.(this, true);
    if (this.setup.length === 0) return this.becomeReady('connected');
    this.machine.transition('connecting', 'handshaking', 'connected');
    this.setupLeft = this.setup.length;
    socket.cork();
    for (const frame of this.setup) socket.write(frame);
    socket.uncork();
  }

  private becomeReady(reason: string): void {
    this.machine.transition(this.machine.state, 'ready', reason);
    this.socket?.setTimeout(0);
    this.flush();
  }

  private lost(err: Error | undefined): void {
    if (this.closeError) return;
    const detail = err ? errorMessage(err) : 'closed by the server';
    const error = this.machine.is('connecting') ? RedisEdgeErrors.backendConnect(this.endpoint.name, `${this.endpoint.address}: ${detail}`) : RedisEdgeErrors.backendLost(this.endpoint.address, detail);
    this.close(error, detail);
  }

  private received(chunk: Buffer, from: number, to: number): void {
    this.lastProgress = Date.now();
    this.input.appendRange(chunk, from, to, this.scanner.needBytes);
    let batch: ReplyBatch;
    try {
      batch = this.scanner.scan(this.input.buffer, this.input.start, this.input.end);
    } catch (err) {
      this.close(RedisEdgeErrors.backendProtocol(this.endpoint.address, errorMessage(err)));
      return;
    }
    const buf = batch.buffer;
    for (let r = 0; r < batch.count; r++) {
      const start = batch.start[r];
      const end = batch.end[r];
      const flags = batch.flags[r];
      if (this.setupLeft > 0) this.setupReply(buf, start, end, flags);
      else if (this.frameSink) this.frameSink.onFrame(this, buf, start, end, flags);
      else if ((flags & ReplyFlag.Push) === 0) this.reply(buf, start, end, flags);
      if (this.closeError) return;
    }
    this.input.consume(batch.consumed);
    this.options.afterRead?.();
  }

  private setupReply(buf: Buffer, start: number, end: number, flags: number): void {
    if ((flags & ReplyFlag.Error) !== 0) {
      this.close(RedisEdgeErrors.backendSetup(this.endpoint.address, buf.toString('utf8', start + 1, end - 2)));
      return;
    }
    if (--this.setupLeft === 0) this.becomeReady('set up');
  }

  private reply(buf: Buffer, start: number, end: number, flags: number): void {
    const fifo = this.fifo;
    if (fifo.length === 0) {
      this.close(RedisEdgeErrors.backendProtocol(this.endpoint.address, 'a reply arrived for no command'));
      return;
    }
    const i = fifo.peek();
    const owner = fifo.owners[i] as ReplySink;
    const seq = fifo.seqs[i];
    const part = fifo.parts[i];
    const sent = fifo.flags[i];
    if ((sent & SendFlag.Redirectable) !== 0 && (flags & ReplyFlag.Error) !== 0) {
      const redirect = redirectOfReply(buf, start, end);
      if (redirect) {
        const frame = { buf: fifo.bufs[i], start: fifo.starts[i], end: fifo.ends[i], attempt: fifo.attempts[i] };
        fifo.shift();
        if (!owner.redirect(seq, part, redirect, frame, sent, this)) owner.deliver(seq, part, buf, start, end);
        return;
      }
    }
    fifo.shift();
    if ((sent & SendFlag.Skip) === 0) owner.deliver(seq, part, buf, start, end);
  }
}
