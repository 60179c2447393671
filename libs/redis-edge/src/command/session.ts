// A command-mode client session: reads commands in place, dispatches each to its backend, and
// writes replies back strictly in command order, bounded by max_outstanding_replies, the query
// buffer limit and the client's own reading speed.
import type { Socket } from 'node:net';
import { CommandScanner, InlineReframer, InputBuffer, type Redirect, type CommandBatch } from '@dbproxy/resp';
import type { LatencyCell } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import { errorReply, RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import { DEFAULT_STATE, type ConnectionState } from '../io/endpoint';
import { OutputQueue } from '../io/output-queue';
import { SendFlag, type ReplySink, type SentFrame } from '../io/reply-sink';
import type { Flushable } from '../io/tick-flusher';
import { descriptorOf, readSocketRanges, StateMachine } from '@dbproxy/runtime';
import type { LeaseSink } from './blocking';
import type { CommandEdge } from './command-edge';
import { dispatchCommand } from './dispatcher';
import { KeyPositions } from './key-finder';
import type { EndpointRoute } from './link-directory';
import { followRedirect } from './redirects';
import { ReplyRing } from './reply-ring';
import type { Subscriber } from './subscriber';
import type { TransactionQueue, WatchPin } from './transaction';

export type ListenerRole = 'read_write' | 'read_only';
export type SessionState = 'ready' | 'transaction' | 'subscribed' | 'closed';

const LEGAL: Readonly<Record<SessionState, readonly SessionState[]>> = {
  ready: ['transaction', 'subscribed', 'closed'],
  transaction: ['ready', 'closed'],
  subscribed: ['ready', 'closed'],
  closed: [],
};

const ASKING = Buffer.from('*1\r\n$6\r\nASKING\r\n');
/** Client output buffered in the socket above which the session stops dispatching until it drains. */
const OUTPUT_HIGH_WATER = 8 * 1024 * 1024;

export class CommandSession implements ReplySink, Flushable {
  flushQueued = false;
  readonly machine = new StateMachine<SessionState>('redis-command-session', 'ready', LEGAL);
  readonly out = new OutputQueue();
  readonly ring = new ReplyRing(this.out);
  readonly keys = new KeyPositions();
  readonly leases = new Set<LeaseSink>();
  state: ConnectionState = DEFAULT_STATE;
  /** Connections of its own per node, once the session carries state or WATCHes (null: shared connections). */
  own: Map<string, BackendLink> | undefined;
  tx: TransactionQueue | undefined;
  watch: WatchPin | undefined;
  subscriber: Subscriber | undefined;
  /** Closing after the replies owed so far (QUIT). */
  quitting = false;
  /** Idle sweeps since the client last sent anything (a field write per read instead of a socket timer). */
  idleSweeps = 0;
  private readonly input = new InputBuffer();
  private readonly scanner: CommandScanner;
  /** Inline commands reach backends as the multibulk frame of their arguments, never as the client's line. */
  private readonly reframer = new InlineReframer();
  private readonly replicas: (EndpointRoute | undefined)[] = [];
  /** Dispatch waits until every owed reply has left (state changes, switching connections). */
  private barrier = false;
  /** The command being dispatched is to be dispatched again once the barrier lifts. */
  private deferred = false;
  private outputPaused = false;
  private readingPaused = false;
  private pumping = false;
  /** The client half-closed: end once every command it sent is answered. */
  private inputEnded = false;

  /** The client's socket, read without the stream layer (readSocketRanges, @dbproxy/runtime). */
  readonly socket: Socket;
  /** Its descriptor, written directly while nothing waits in the stream (writeDirect, @dbproxy/runtime). */
  private readonly fd: number;

  constructor(
    accepted: Socket,
    readonly listener: ListenerRole,
    readonly edge: CommandEdge,
  ) {
    const s = edge.settings;
    this.scanner = new CommandScanner({ queryBufferLimit: s.queryBufferLimit, maxBulkLength: s.maxBulkBytes });
    // A client that half-closes after its last command still gets every reply, then the FIN;
    // a blocked or subscribed one has gone (as Redis sees it), so its blocks are cancelled.
    const socket = readSocketRanges(accepted, (buf, start, end) => this.received(buf, start, end), true);
    this.socket = socket;
    this.fd = descriptorOf(socket);
    socket.once('end', () => {
      this.inputEnded = true;
      if (this.leases.size > 0 || this.subscriber) this.close('client closed while blocked or subscribed');
      else this.endIfDone();
    });
    socket.on('drain', () => this.drained());
    socket.on('error', (err) => this.close(`client error: ${errorMessage(err)}`));
    socket.once('close', () => this.close('client closed'));
    edge.metrics.sessions.inc({ mode: 'command', listener });
  }

  get id(): number {
    return this.machine.id;
  }

  get closed(): boolean {
    return this.machine.is('closed');
  }

  get readOnly(): boolean {
    return this.listener === 'read_only';
  }

  // ---- replies ----

  /** A reply the proxy makes itself, in sequence. */
  reply(buf: Buffer): void {
    this.complete(this.ring.reserve(), buf);
  }

  /** An error reply in sequence; `reason` counts it as a rejected command. */
  replyError(err: unknown, reason?: string): void {
    if (reason) this.edge.metrics.rejected.inc({ reason, listener: this.listener });
    this.reply(errorReply(err));
  }

  complete(seq: number, buf: Buffer): void {
    this.deliver(seq, -1, buf, 0, buf.length);
  }

  deliver(seq: number, _part: number, buf: Buffer, start: number, end: number): void {
    if (this.closed) return;
    if (this.ring.fill(seq, buf, start, end)) this.emitted();
  }

  fail(seq: number, _part: number, err: Error): void {
    this.complete(seq, errorReply(err));
  }

  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    return followRedirect(this, this, seq, part, redirect, frame, flags, via);
  }

  /** Sends a command again (after MOVED, ASK or TRYAGAIN) to `route`, behind ASKING when `asking`. */
  resend(owner: ReplySink, seq: number, part: number, route: EndpointRoute, asking: boolean, frame: SentFrame, flags: number, attempt: number): void {
    const link = this.linkFor(route);
    if (asking) link.send(owner, 0, -1, SendFlag.Skip, 0, ASKING, 0, ASKING.length);
    link.send(owner, seq, part, asking ? flags | SendFlag.Asked : flags & ~SendFlag.Asked, attempt, frame.buf, frame.start, frame.end);
  }

  // ---- routing helpers ----

  /** Sends `buf[start, end)` to `route` as the next command. */
  sendTo(route: EndpointRoute, buf: Buffer, start: number, end: number, timing?: LatencyCell): void {
    const link = this.own ? this.ownLink(route) : route.shared && !route.shared.closed ? route.shared : this.edge.links.shared(route);
    const seq = this.ring.reserve();
    if (timing !== undefined) this.ring.time(seq, timing);
    link.send(this, seq, -1, this.edge.routes.cluster ? SendFlag.Redirectable : 0, 0, buf, start, end);
  }

  linkFor(route: EndpointRoute): BackendLink {
    if (this.own) return this.ownLink(route);
    const shared = route.shared;
    return shared && !shared.closed ? shared : this.edge.links.shared(route);
  }

  ownLink(route: EndpointRoute): BackendLink {
    const own = (this.own ??= new Map());
    let link = own.get(route.endpoint.key);
    if (!link || link.closed) {
      link = this.edge.links.open(route.endpoint, this.state);
      own.set(route.endpoint.key, link);
    }
    return link;
  }

  /** Where a group (slot or shard index) is served for this session: its primary, or a replica on the read-only listener. */
  routeOfGroup(group: number): EndpointRoute | undefined {
    const routes = this.edge.routes;
    if (!this.readOnly) return routes.primaryOfGroup(group);
    const shard = routes.shardOfGroup(group);
    return shard < 0 ? routes.primaryOfGroup(group) : this.replicaOf(shard);
  }

  /** The node keyless commands go to. */
  homeRoute(): EndpointRoute | undefined {
    const routes = this.edge.routes;
    return this.readOnly ? this.replicaOf(routes.home) : routes.shards[routes.home]?.primary;
  }

  /** Every shard once: primaries, or one replica each on the read-only listener. */
  allShards(): (EndpointRoute | undefined)[] {
    const routes = this.edge.routes;
    return this.readOnly ? routes.shards.map((_, i) => this.replicaOf(i)) : routes.shards.map((s) => s.primary);
  }

  private replicaOf(shard: number): EndpointRoute | undefined {
    const cached = this.replicas[shard];
    if (cached) return cached;
    const chosen = this.edge.chooseReplica(shard);
    this.replicas[shard] = chosen;
    return chosen;
  }

  // ---- flow control ----

  /** Stop dispatching until every owed reply has left (then dispatch resumes by itself). */
  holdUntilDrained(): void {
    this.barrier = true;
  }

  /** The current command needs nothing owed before it: it runs again once every owed reply has left. */
  retryAfterDrain(): void {
    this.barrier = true;
    this.deferred = true;
  }

  /** After a state change: connections opened with the old state are closed (none owes a reply: a barrier preceded). */
  dropOwnLinksExcept(keep: BackendLink | undefined): void {
    if (!this.own) return;
    for (const [key, link] of this.own) {
      if (link === keep) continue;
      this.own.delete(key);
      link.close(RedisEdgeErrors.backendLost(link.endpoint.address, 'session state changed'), 'session state changed');
    }
  }

  flush(): void {
    if (this.closed || this.out.empty) return;
    const ok = this.out.writeTo(this.socket, this.fd);
    if (!ok && !this.outputPaused && this.socket.writableLength >= OUTPUT_HIGH_WATER) {
      this.outputPaused = true;
      this.edge.metrics.backpressure.inc({ reason: 'output' });
      this.subscriber?.setReading(false);
    }
    if (this.quitting && this.ring.outstanding === 0) this.socket.end();
    else this.endIfDone();
  }

  private endIfDone(): void {
    if (!this.inputEnded || this.closed || this.ring.outstanding > 0 || !this.out.empty || this.halted()) return;
    if (this.input.length > 0) this.pump();
    if (this.ring.outstanding === 0 && this.out.empty) this.socket.end();
  }

  private emitted(): void {
    this.edge.replies.schedule(this);
    if (this.barrier && this.ring.outstanding === 0) {
      this.barrier = false;
      this.resume();
    } else if (this.readingPaused) this.resume();
  }

  private drained(): void {
    if (!this.outputPaused) return;
    this.outputPaused = false;
    this.subscriber?.setReading(true);
    this.resume();
  }

  private halted(): boolean {
    return this.barrier || this.outputPaused || this.quitting || this.closed;
  }

  private resume(): void {
    if (this.halted()) return;
    if (this.readingPaused && this.ring.outstanding < this.edge.settings.maxOutstanding) {
      this.readingPaused = false;
      this.socket.resume();
    }
    if (this.input.length > 0) this.pump();
  }

  private received(buf: Buffer, start: number, end: number): void {
    if (this.closed) return;
    this.idleSweeps = 0;
    this.input.appendRange(buf, start, end, this.scanner.needBytes);
    this.pump();
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      this.dispatchAvailable();
    } finally {
      this.pumping = false;
    }
    if (!this.out.empty) this.edge.replies.schedule(this);
  }

  private dispatchAvailable(): void {
    const max = this.edge.settings.maxOutstanding;
    while (!this.halted()) {
      const budget = max - this.ring.outstanding;
      if (budget <= 0) return this.pauseReading();
      let batch: CommandBatch;
      try {
        batch = this.scanner.scan(this.input.buffer, this.input.start, this.input.end, budget);
      } catch (err) {
        return this.protocolError(err);
      }
      for (let i = 0; i < batch.count; i++) {
        if (batch.isInline(i)) dispatchCommand(this, this.reframer.reframe(batch, i), 0);
        else dispatchCommand(this, batch, i);
        if (this.halted() && (i + 1 < batch.count || this.deferred)) {
          // Commands after a barrier wait unread; they are scanned again when dispatch resumes.
          this.input.consume(this.deferred ? batch.frameStart[i] : batch.frameEnd[i]);
          this.deferred = false;
          this.scanner.reset();
          return this.pauseReadingIfBuffered();
        }
      }
      this.input.consume(batch.consumed);
      if (batch.count < budget) return this.pauseReadingIfBuffered();
    }
    this.pauseReadingIfBuffered();
  }

  private pauseReading(): void {
    if (this.readingPaused) return;
    this.readingPaused = true;
    this.socket.pause();
    this.edge.metrics.backpressure.inc({ reason: 'outstanding' });
  }

  /** While dispatch waits, read no more than what is buffered already (the query buffer bound). */
  private pauseReadingIfBuffered(): void {
    if (this.halted() && this.input.length > 0 && !this.readingPaused && !this.closed) {
      this.readingPaused = true;
      this.socket.pause();
    }
  }

  private protocolError(err: unknown): void {
    // Like Redis: the error, then the connection is closed (the stream cannot be resynchronized).
    this.reply(errorReply(err));
    this.quitting = true;
    this.input.consume(this.input.end);
    this.edge.replies.schedule(this);
  }

  /** After `POST` or `Host:` (an HTTP request sent to Redis), as Redis does: no reply, closed once earlier replies have left. */
  refuseCrossProtocol(): void {
    this.edge.metrics.rejected.inc({ reason: 'cross_protocol', listener: this.listener });
    this.quitting = true;
    if (this.ring.outstanding === 0 && this.out.empty) this.socket.end();
  }

  /** Called every `sweepMs` by the service: closes a client silent for proxy.client_read_timeout_seconds (not while it waits for replies, blocks or listens). */
  sweepIdle(sweepMs: number): void {
    if (++this.idleSweeps * sweepMs < this.edge.settings.idleTimeoutMs) return;
    if (this.subscriber || this.leases.size > 0 || this.ring.outstanding > 0) return;
    this.close('idle for proxy.client_read_timeout_seconds');
  }

  /** Drain: a session with nothing owed and nothing blocked is closed now (its client reconnects elsewhere). */
  closeIfIdle(reason: string): void {
    if (this.ring.outstanding === 0 && this.leases.size === 0 && this.out.empty) this.close(reason);
  }

  /** Ends the session: its own connections close, leased connections of abandoned blocking commands too. */
  close(reason: string): void {
    if (this.closed) return;
    this.machine.transition(this.machine.state, 'closed', reason);
    this.edge.metrics.sessions.dec({ mode: 'command', listener: this.listener });
    this.socket.destroy();
    const err = RedisEdgeErrors.backendLost('client', reason);
    if (this.own) for (const link of this.own.values()) link.close(err, `session closed: ${reason}`);
    this.own = undefined;
    this.subscriber?.close(reason);
    for (const lease of [...this.leases]) lease.abandon();
    for (const route of this.replicas) if (route) this.edge.releaseReplica(route);
    this.out.clear();
  }
}
