// A command-mode client session: reads commands in place, dispatches each to its backend, and
// writes replies back strictly in command order, bounded by max_outstanding_replies, the query
// buffer limit and the client's own reading speed.
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { CommandScanner, InlineReframer, InputBuffer, type Redirect, type CommandBatch } from '@dbproxy/resp';
import type { LatencyCell } from '@dbproxy/observability';
import { errorMessage, peerAddress, publishOperationalEvent, sessionCloseKind } from '@dbproxy/util';
import { errorReply, logIfInternal, RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import { DEFAULT_STATE, type ConnectionState } from '../io/endpoint';
import { OutputQueue } from '../io/output-queue';
import { SendFlag, type ReplySink, type SentFrame } from '../io/reply-sink';
import type { Flushable } from '../io/tick-flusher';
import { descriptorOf, DirectSocket, PauseHoldTimeout, readSocketRanges, StateMachine, type SessionSnapshot } from '@dbproxy/runtime';
import type { LeaseSink } from './blocking';
import type { CommandEdge } from './command-edge';
import { CommandSpans } from './command-spans';
import { dispatchCommand } from './dispatcher';
import { KeyPositions } from './key-finder';
import type { EndpointRoute } from './link-directory';
import { followRedirect } from './redirects';
import { RetriedCommand } from './retried-command';
import { SlotGates } from './slot-gates';
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
/** How long a closing session's last error may take to reach a client that does not read. */
const FAREWELL_MS = 5_000;

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
  /** A span per command (command-spans.ts); undefined when the process records no spans. */
  readonly spans: CommandSpans | undefined;
  /** Closing after the replies owed so far (QUIT). */
  quitting = false;
  /** Idle sweeps since the client last sent anything (a field write per read instead of a socket timer). */
  idleSweeps = 0;
  /** Admin id (GET /sessions, DELETE /v1/sessions/{id}), unique fleet-wide. */
  readonly adminId: string;
  private readonly startedAt = Date.now();
  private readonly clientAddress: string;
  private readonly epoch: number;
  /** The running or last command's name (never its arguments), for admin reports. */
  statement: string | null = null;
  /** Dispatch waits for the operator's pause to end. */
  private pauseHeld = false;
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
  /** Pub/sub messages handed to the socket since it last took everything (redis.max_pending_pushes). */
  pushesInFlight = 0;
  /** Cache hits waiting for their tracker barrier (src/cache/hit-barrier.ts): later non-hit commands wait for them. */
  hitsWaiting = 0;
  /** One of those hits was read from the server instead: the rest are too, so their order holds (reset at zero waiting). */
  hitsRefetching = false;
  /** Slots whose later commands wait for a fan-out or a retry in flight (cluster). */
  readonly gates = new SlotGates();
  private readingPaused = false;
  private pumping = false;
  /** The client half-closed: end once every command it sent is answered. */
  private inputEnded = false;
  private readonly openedAt = Date.now();

  /** The client's socket, read without the stream layer (readSocketRanges, @dbproxy/runtime). */
  readonly socket: Socket;
  /** Its descriptor, written directly while nothing waits in the stream (DirectSocket, @dbproxy/runtime). */
  private readonly fd: number;
  /** The socket for direct writes (DirectSocket: its stream state read once). */
  private readonly direct: DirectSocket;

  constructor(
    accepted: Socket,
    readonly listener: ListenerRole,
    readonly edge: CommandEdge,
  ) {
    const s = edge.settings;
    this.adminId = edge.admin.ids.allocate();
    this.epoch = edge.admin.epoch();
    this.spans = edge.tracing ? new CommandSpans(edge.tracer, listener, accepted.remoteAddress ?? '') : undefined;
    this.scanner = new CommandScanner({ queryBufferLimit: s.queryBufferLimit, maxBulkLength: s.maxBulkBytes });
    // A client that half-closes after its last command still gets every reply, then the FIN;
    // a blocked or subscribed one has gone (as Redis sees it), so its blocks are cancelled.
    this.clientAddress = peerAddress(accepted); // before the handle moves to the adopted socket
    const socket = readSocketRanges(accepted, (buf, start, end) => this.received(buf, start, end), true);
    this.socket = socket;
    this.fd = descriptorOf(socket);
    this.direct = new DirectSocket(socket, this.fd);
    socket.once('end', () => {
      this.inputEnded = true;
      if (this.leases.size > 0 || this.subscriber) this.close('client closed while blocked or subscribed');
      else this.endIfDone();
    });
    socket.on('drain', () => this.drained());
    socket.on('error', (err) => this.close(`client error: ${errorMessage(err)}`));
    socket.once('close', () => this.close('client closed'));
    edge.metrics.sessions.inc({ mode: 'command', listener });
    publishOperationalEvent({ event: 'session_opened', protocol: 'redis', session: this.machine.id, client: this.clientAddress, user: null, listener });
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
    logIfInternal(this.edge.logger, err, { listener: this.listener, reason });
    this.reply(errorReply(err));
  }

  complete(seq: number, buf: Buffer): void {
    this.deliver(seq, -1, buf, 0, buf.length);
  }

  deliver(seq: number, _part: number, buf: Buffer, start: number, end: number): void {
    if (this.closed) return;
    if (this.spans !== undefined) this.spans.replied(seq, buf, start, end);
    if (this.ring.fill(seq, buf, start, end)) this.emitted();
  }

  fail(seq: number, _part: number, err: Error): void {
    logIfInternal(this.edge.logger, err, { listener: this.listener });
    this.complete(seq, errorReply(err));
  }

  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    // A delayed retry behind commands dispatched after this one would run after them: the client gets TRYAGAIN instead.
    if (redirect.kind === 'tryagain' || redirect.kind === 'clusterdown') {
      if (!this.ring.isNewest(seq)) {
        this.edge.metrics.retries.inc({ reason: `${redirect.kind}_returned` });
        return false;
      }
      return new RetriedCommand(this).redirect(seq, part, redirect, frame, flags, via);
    }
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
    if (this.spans !== undefined) this.spans.sending(route.endpoint, this.state.db);
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
    const ok = this.out.writeTo(this.direct);
    if (ok) this.pushesInFlight = 0;
    else if (!this.outputPaused && (this.socket.writableLength >= this.edge.settings.clientOutputLimitBytes || this.pushesInFlight >= this.edge.settings.maxPendingPushes)) {
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
    this.pushesInFlight = 0;
    if (!this.outputPaused) return;
    this.outputPaused = false;
    this.subscriber?.setReading(true);
    this.resume();
  }

  private halted(): boolean {
    return this.barrier || this.outputPaused || this.quitting || this.closed || this.pauseHeld;
  }

  /** The edge is paused: nothing is dispatched until resume; after the hold timeout the next command gets an error. */
  private holdForPause(): void {
    this.pauseHeld = true;
    this.edge.admin.pause.hold().then(
      () => this.releaseHeld(0),
      (err: unknown) => this.releaseHeld(err instanceof PauseHoldTimeout ? err.seconds : 1),
    );
  }

  private releaseHeld(timedOutAfter: number): void {
    this.pauseHeld = false;
    if (this.closed) return;
    if (timedOutAfter > 0) {
      try {
        const batch = this.scanner.scan(this.input.buffer, this.input.start, this.input.end, 1);
        if (batch.count > 0) {
          this.replyError(RedisEdgeErrors.pauseTimeout(timedOutAfter), 'paused');
          this.input.consume(batch.frameEnd[0] as number);
          this.scanner.reset();
        }
      } catch (err) {
        return this.protocolError(err);
      }
    }
    this.resume();
  }

  /** This session as GET /sessions shows it. */
  describe(): SessionSnapshot {
    const running = this.ring.outstanding > 0;
    const state = this.pauseHeld ? 'held' : this.tx ? 'in transaction' : this.subscriber ? 'subscribed' : this.leases.size > 0 ? 'blocked' : running ? 'running' : this.own ? 'pinned' : 'idle';
    return {
      id: this.adminId,
      clientAddress: this.clientAddress,
      user: this.state.auth?.username?.toString('utf8') ?? 'default',
      database: this.state.db === undefined ? '' : String(this.state.db),
      listener: this.listener,
      state,
      statement: this.statement,
      backend: null,
      pinnedReason: this.watch ? 'WATCH' : this.own ? 'connection state' : null,
      epoch: this.epoch,
      startedAt: this.startedAt,
      bytesIn: this.socket.bytesRead,
      bytesOut: this.out.written,
    };
  }

  /** An operator closed the session: the replies owed so far, then `-ERR <reason>`, then the close. */
  terminate(reason: string): void {
    if (this.closed) return;
    this.flush();
    this.socket.end(errorReply(RedisEdgeErrors.adminKilled(reason)));
    this.close('killed by an administrator');
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
      if (this.edge.admin.pause.paused && this.tx === undefined && this.input.length > 0) return this.holdForPause();
      const budget = max - this.ring.outstanding;
      if (budget <= 0) return this.pauseReading();
      let batch: CommandBatch;
      try {
        batch = this.scanner.scan(this.input.buffer, this.input.start, this.input.end, budget);
      } catch (err) {
        return this.protocolError(err);
      }
      for (let i = 0; i < batch.count; i++) {
        if (batch.isInline(i)) this.dispatchOne(this.reframer.reframe(batch, i), 0);
        else this.dispatchOne(batch, i);
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

  private dispatchOne(batch: CommandBatch, i: number): void {
    const spans = this.spans;
    if (spans === undefined) return dispatchCommand(this, batch, i);
    spans.begin(batch, i, this.ring.next);
    dispatchCommand(this, batch, i);
    spans.dispatched(this.ring.next, this.deferred);
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
    logIfInternal(this.edge.logger, err, { listener: this.listener, while: 'reading commands' });
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

  /** The shutdown deadline passed: replies ready go out, then `-ERR` (the answer to the oldest command still owed, a BLPOP...), then the close. */
  shutDown(): void {
    if (this.closed) return;
    this.flush();
    this.close('shutdown', errorReply(RedisEdgeErrors.shuttingDown()));
  }

  /** Ends the session: its own connections close, leased connections of abandoned blocking commands too. */
  /**
   * Closes the session; `farewell` (an error in the client's protocol) is written after the output
   * already owed, then the socket is ended (destroyed if the client does not take it within 5 s).
   */
  close(reason: string, farewell?: Buffer): void {
    if (this.closed) return;
    this.machine.transition(this.machine.state, 'closed', reason);
    this.edge.metrics.sessions.dec({ mode: 'command', listener: this.listener });
    const user = this.state.auth ? (this.state.auth.username?.toString() ?? 'default') : null;
    const detail = this.quitting && reason === 'client closed' ? 'client quit (QUIT)' : reason;
    publishOperationalEvent({ event: 'session_closed', protocol: 'redis', session: this.machine.id, client: this.clientAddress, user, listener: this.listener, duration_ms: Date.now() - this.openedAt, reason: sessionCloseKind(detail), detail });
    if (farewell && !this.socket.destroyed) {
      if (!this.out.empty) this.out.writeTo(this.direct);
      const socket = this.socket;
      socket.end(farewell);
      setTimeout(() => socket.destroy(), FAREWELL_MS).unref();
    } else if (this.socket.writableEnded && !this.socket.destroyed) this.socket.once('finish', () => this.socket.destroy());
    else this.socket.destroy();
    const err = RedisEdgeErrors.backendLost('client', reason);
    if (this.own) for (const link of this.own.values()) link.close(err, `session closed: ${reason}`);
    this.own = undefined;
    this.subscriber?.close(reason);
    this.spans?.close(reason);
    for (const lease of [...this.leases]) lease.abandon();
    for (const route of this.replicas) if (route) this.edge.releaseReplica(route);
    this.out.clear();
  }
}
