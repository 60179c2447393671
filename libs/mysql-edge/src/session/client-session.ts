// Handling of client sessions: one per client connection, from the greeting to the close. Frames
// the client's packets, runs one command at a time (queueing any the client pipelines), writes
// replies and forwarded results with backpressure, keeps the session's replayable state, and
// answers to the shared deadline sweep. Every state change goes through transition().
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { DbSpan } from '@dbproxy/observability';
import { adoptSocket, clientAddressesOf, descriptorOf, DirectSocket, PauseHoldTimeout, type ProxiedAddresses } from '@dbproxy/runtime';
import { Command, PacketFramer, encodingForCollation, hasFlag, type MysqlPacket, type ResponseSummary } from '@dbproxy/protocol-mysql';
import type { RouteChoice } from '@dbproxy/routing';
import type { SqlRoute } from '@dbproxy/sql';
import { peerAddress, publishOperationalEvent, sessionCloseKind } from '@dbproxy/util';
import type { BackendConnection } from '../backend/backend-connection';
import { loginSettings } from '../frontend/login-settings';
import { BACKEND_COLLATION, collationKey } from '../backend/collations';
import type { EdgeContext, SessionState } from '../edge-context';
import type { EdgeEpoch } from '../epoch';
import { MysqlEdgeErrors, reportInternal, toMysqlError, type MysqlError } from '../errors';
import { ClientLogin, type LoginHost, type LoginResult } from '../frontend/client-login';
import { upgradeToTls } from '../frontend/frontend-tls';
import { countRoute, countRouteRefused, routeFields } from '../frontend/login-route';
import { errPacket, okPacket, sessionStatus } from '../wire';
import { BackendExchange, type CommandKind, type ExchangeOwner } from './backend-exchange';
import { applyStatementResponse, dispatchCommand, type PendingPrepare } from './statement-commands';
import { ChangeUserExchange } from './change-user';
import { killable } from './kill-command';
import { LocalInfileUpload } from './local-infile';
import type { ListenerRole, PinCause } from './route-planner';
import { StatementRegistry } from './statement-registry';
import { startStatementSpan } from './statement-span';
import type { SessionFanout } from '../fanout/session-fanout';
import type { HandshakeResponse } from '@dbproxy/protocol-mysql';
import { startPassthrough, type Negotiated, type PassthroughRelay } from '../passthrough/passthrough-session';
import type { GtidPosition } from '../causal/gtid-position';

const SESSION = Symbol('mysql-edge session');
type SessionSocket = Socket & { [SESSION]?: ClientSession };

function onData(this: SessionSocket, chunk: Buffer): void {
  this[SESSION]?.receive(chunk);
}
function onClose(this: SessionSocket): void {
  this[SESSION]?.close('client closed the connection');
}
function onError(this: SessionSocket, err: Error): void {
  this[SESSION]?.close(`client socket error: ${err.message}`);
}

/** Client packets held while a command runs (clients rarely pipeline); past this the socket pauses. */
const QUEUE_PAUSE = 64;
let nextSessionId = 1;
const TRANSACTIONAL: ReadonlySet<PinCause> = new Set(['transaction', 'autocommit', 'implicit_transaction']);

export class ClientSession implements LoginHost, ExchangeOwner {
  readonly id = nextSessionId++;
  /** The connection id the client sees (greeting, KILL): in the edges' range, never a backend thread id (src/kill/edge-ids.ts). */
  readonly connectionId: number;
  state: SessionState = 'login';
  /** Admin id (GET /sessions, DELETE /v1/sessions/{id}), unique fleet-wide. */
  readonly adminId: string;
  readonly startedAt = Date.now();
  readonly clientAddress: string;
  /** Fingerprint (or command kind) of the running or last backend command, for admin reports. */
  statement: string | null = null;
  /** The next command waits for the operator's pause to end (it is first in `queue`). */
  held = false;
  /** Bytes written past the stream (DirectSocket), which socket.bytesWritten does not count. */
  directBytesOut = 0;
  socket: Socket;
  /** The plain client socket's descriptor once its reads bypass the stream (DirectSocket, @dbproxy/runtime); -1 before and for TLS. */
  private fd = -1;
  /** The client socket for direct writes (DirectSocket, its stream state read once); the stream until adopted. */
  private direct: DirectSocket;
  private readonly framer: PacketFramer;
  epoch: EdgeEpoch;
  capabilities = 0;
  profile = 0;
  user = '';
  /** The handshake route ([[mysql.routes]]) that chose this session's shard; null without routes. */
  route: RouteChoice | null = null;
  schema: string | null = null;
  collation: number = BACKEND_COLLATION;
  charsetKey = collationKey(BACKEND_COLLATION);
  charsetSql: string | null = null;
  encoding: BufferEncoding = 'utf8';
  autocommit = true;
  secure = false;
  /** When this session last wrote on each shard: the read-after-write window is per shard. */
  private readonly lastWriteAt = new Map<string, number>();
  /** Causal reads: the GTID this session's last commit on each shard got (read_consistency = "causal"). */
  private readonly causalTargets = new Map<string, GtidPosition>();
  /**
   * With sharding, a BEGIN / START TRANSACTION the edge answered itself: it is sent (as it was
   * written) before the next statement, on that statement's shard, which the transaction then keeps.
   */
  pendingBegin: string | null = null;
  /** The open transaction wrote: its end opens the read-after-write window again (the commit is when others can see the write). */
  transactionWrote = false;
  /** Cached tables the open transaction wrote: their generations are bumped again at its COMMIT (src/cache). */
  cacheWrites: Set<string> | null = null;
  /** When the current state's deadline passes (coarse clock ms); 0 = none. */
  deadline = 0;
  private login: ClientLogin | null;
  /** A login being relayed to a backend ([mysql] auth = "passthrough"); cancelled if the session closes first. */
  private relay: PassthroughRelay | null = null;
  /** The session is logged in on a backend connection of its own (auth passthrough), pinned for its life. */
  passthroughAuth = false;
  scramble: Buffer | null = null;
  statements: StatementRegistry | null = null;
  private ex: BackendExchange | null = null;
  /** Text of the COM_QUERY running (for replayed settings); null otherwise. */
  currentSql: string | null = null;
  pendingPrepare: PendingPrepare | null = null;
  pendingSchema: string | null = null;
  changeUser: ChangeUserExchange | null = null;
  private queue: MysqlPacket[] | null = null;
  /** Sequence id of the edge's own reply to the command being dispatched. */
  replySeq = 1;
  private pumping = false;
  private blocked: BackendConnection | null = null;
  /** This session paused `blocked` (it resumes it on drain or close). */
  private pausedBackend = false;
  /** Fanout copies queued in the client's transaction and warnings of failed ones (src/fanout); made on first use. */
  fanout: SessionFanout | null = null;
  /** A LOAD DATA LOCAL INFILE whose file the client is sending (see local-infile.ts). */
  private upload: LocalInfileUpload | null = null;
  private readonly onPacket = (packet: MysqlPacket): boolean => this.packetIn(packet);
  /** When the login succeeded (0 before): the operators' session lines are written from then on. */
  private openedAt = 0;
  private client = '';
  /** The client's addresses (a PROXY protocol header's when it came through a load balancer): backends with proxy_protocol are told them. */
  readonly origin: ProxiedAddresses;

  constructor(
    socket: Socket,
    readonly listener: ListenerRole,
    readonly edge: EdgeContext,
  ) {
    this.socket = socket;
    this.direct = new DirectSocket(socket, -1);
    this.epoch = edge.epoch();
    this.connectionId = edge.kills.ids.allocate(killable(this));
    this.adminId = edge.sessionIds.allocate();
    this.clientAddress = `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`;
    this.origin = clientAddressesOf(socket);
    this.framer = new PacketFramer({ maxPacketSize: this.epoch.limits.maxPacketBytes });
    const s = socket as SessionSocket;
    s[SESSION] = this;
    s.on('data', onData);
    s.on('close', onClose);
    s.on('error', onError);
    edge.metrics.sessions.inc({ listener });
    this.deadline = edge.clock.now + this.epoch.limits.loginTimeoutMs;
    this.login = new ClientLogin(this, loginSettings(edge, this.epoch, socket.remoteAddress), this.connectionId);
    this.scramble = this.login.scramble;
    socket.write(this.login.greeting());
  }

  transition(to: SessionState, reason: string): void {
    this.edge.sessionStates.move(this.id, this.state, to, reason);
    this.state = to;
  }

  /** The exchange that runs this session's backend commands (made on first use, then reused). */
  exchange(): BackendExchange {
    return (this.ex ??= new BackendExchange(this));
  }

  /** The exchange, if the session ever used one (KILLs stop its command). */
  runningExchange(): BackendExchange | null {
    return this.ex;
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  get pinned(): boolean {
    return this.ex !== null && this.ex.pin !== null;
  }

  /** Inside a transaction: a pause lets its statements run. */
  inTransaction(): boolean {
    const pin = this.ex?.pin ?? null;
    return this.pendingBegin !== null || (pin !== null && TRANSACTIONAL.has(pin)) || (pin === 'passthrough' && this.ex?.transactionOpen === true);
  }

  /** The epoch for the next command: the newest, unless a pin holds the one it started on. */
  currentEpoch(): EdgeEpoch {
    if (this.ex?.pinnedEpoch) return (this.epoch = this.ex.pinnedEpoch);
    return (this.epoch = this.edge.epoch());
  }

  /**
   * True while reads of `shard` must go to its primary after this session's last write there: within
   * read_after_write_seconds of it, or (causal reads) for the commands that run no wait (prepares,
   * metadata commands, every-shard reads) once the session wrote there.
   */
  readAfterWrite(shard: string): boolean {
    return this.windowOpen(shard) || this.causalTargets.has(shard);
  }

  /** Within read_after_write_seconds of this session's last write on `shard` (not covered by a tracked GTID). */
  windowOpen(shard: string): boolean {
    if (this.lastWriteAt.size === 0) return false;
    const at = this.lastWriteAt.get(shard);
    if (at === undefined) return false;
    if (Date.now() - at < this.epoch.limits.readAfterWriteMs) return true;
    this.lastWriteAt.delete(shard);
    return false;
  }

  noteWrite(shard: string): void {
    if (this.epoch.limits.readAfterWriteMs > 0) this.lastWriteAt.set(shard, Date.now());
  }

  /** Causal reads: the write committed as `gtid`; reads wait for it on replicas instead of the window. */
  noteCommit(shard: string, gtid: GtidPosition): void {
    this.causalTargets.set(shard, gtid);
    this.lastWriteAt.delete(shard);
  }

  /** The position a replica must have applied before it serves this session's read on `shard`; null: none needed. */
  causalTarget(shard: string): GtidPosition | null {
    if (this.causalTargets.size === 0 || !this.epoch.limits.causal) return null;
    return this.causalTargets.get(shard) ?? null;
  }

  charsetStatement(): string {
    return this.charsetSql ?? this.edge.collations.setNames(this.collation);
  }

  receive(chunk: Buffer): void {
    let rest: Buffer | undefined;
    try {
      rest = this.framer.feed(chunk, this.onPacket);
    } catch (err) {
      return this.fatal(err, this.upload?.nextSeq ?? 1);
    }
    if (this.login?.wantsTls) this.startTls(rest);
  }

  private packetIn(packet: MysqlPacket): boolean {
    switch (this.state) {
      case 'login':
        return (this.login as ClientLogin).onPacket(packet);
      case 'ready':
        // while earlier output waits for the client to read, commands wait too (bounded by QUEUE_PAUSE)
        if (this.blocked !== null || (this.queue !== null && this.queue.length > 0)) {
          this.enqueue(packet);
          this.pump();
        } else this.dispatch(packet);
        return true;
      case 'reauth':
        (this.changeUser as ChangeUserExchange).next(packet);
        return true;
      case 'closed':
        return false;
      default:
        if (this.upload !== null) this.relayUpload(this.upload, packet);
        else this.enqueue(packet);
        return true;
    }
  }

  startUpload(conn: BackendConnection, requestSeq: number): void {
    this.upload = new LocalInfileUpload(conn, this.socket, requestSeq);
  }

  /** A file packet: to the backend; the statement's deadline starts again from each one. */
  private relayUpload(upload: LocalInfileUpload, packet: MysqlPacket): void {
    upload.relay(packet);
    this.deadline = this.edge.clock.now + this.epoch.limits.queryTimeoutMs;
  }

  private enqueue(packet: MysqlPacket): void {
    const queue = (this.queue ??= []);
    queue.push(packet);
    if (queue.length === QUEUE_PAUSE) this.socket.pause();
  }

  private dispatch(packet: MysqlPacket): void {
    if (this.edge.pause.paused && isStatement(packet) && !this.inTransaction()) return this.holdForPause(packet);
    this.edge.commandsRun++;
    // a command of 16 MiB - 1 bytes and more takes several frames: the reply follows the last
    this.replySeq = (packet.lastSequenceId + 1) & 0xff;
    try {
      dispatchCommand(this, packet);
    } catch (err) {
      if (this.state === 'ready') this.fail(err);
      else this.fatal(err, this.replySeq);
    }
  }

  /** The edge is paused: the statement waits (first in the queue) until resume, or fails after the hold timeout. */
  private holdForPause(packet: MysqlPacket): void {
    (this.queue ??= []).unshift(packet);
    this.held = true;
    this.deadline = 0;
    this.edge.pause.hold().then(
      () => this.releaseHeld(null),
      (err: unknown) => this.releaseHeld(err),
    );
  }

  private releaseHeld(err: unknown): void {
    const seq = this.heldReplySeq();
    this.held = false;
    if (this.state === 'closed') return;
    if (err !== null) {
      this.queue?.shift();
      this.fail(MysqlEdgeErrors.pauseTimeout(err instanceof PauseHoldTimeout ? err.seconds : 0), seq);
    }
    this.pump();
  }

  /** Sequence id of the reply a held command waits for (0 when none is held). */
  heldReplySeq(): number {
    const first = this.held ? this.queue?.[0] : undefined;
    return first ? (first.lastSequenceId + 1) & 0xff : 0;
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    const queue = this.queue;
    while (queue !== null && queue.length > 0 && this.state === 'ready' && this.blocked === null && !this.held) {
      if (queue.length === QUEUE_PAUSE) this.socket.resume();
      this.dispatch(queue.shift() as MysqlPacket);
    }
    this.pumping = false;
  }

  /** Runs a command on the exchange (the caller set its kind, plan and statement). */
  runOnBackend(packet: MysqlPacket, kind: CommandKind, route: SqlRoute | null): void {
    const ex = this.exchange();
    ex.kind = kind;
    this.statement = route !== null ? route.fingerprint.text : kind;
    this.transition('exchanging', kind);
    this.deadline = Date.now() + this.epoch.limits.queryTimeoutMs;
    ex.run(packet, this.startSpan(kind, route));
  }

  private startSpan(kind: CommandKind, route: SqlRoute | null): DbSpan | null {
    return startStatementSpan(this.edge.tracer, kind, route, this);
  }

  // --- ExchangeOwner --------------------------------------------------------------------------

  waiting(): void {
    if (this.state === 'exchanging') this.transition('routing', 'pool-wait');
  }

  deliver(slices: Buffer[], conn: BackendConnection): void {
    const socket = this.socket;
    let ok: boolean;
    if (slices.length === 1) {
      const slice = slices[0] as Buffer;
      if (this.fd >= 0) this.directBytesOut += slice.length;
      ok = this.direct.write(slice);
    } else {
      socket.cork();
      ok = true;
      for (const slice of slices) ok = socket.write(slice);
      socket.uncork();
    }
    if (!ok && this.blocked === null) this.block(conn);
  }

  /**
   * The client reads slower than the backend sends: stop reading the backend until it drains. A
   * connection other sessions' reads share is not paused for one of them (what waits is bounded by
   * max_result_bytes); the client write deadline applies either way, until the client has read
   * what was written (also after the command ended: see commandDone).
   */
  private block(conn: BackendConnection): void {
    this.blocked = conn;
    this.pausedBackend = !conn.shared;
    if (this.pausedBackend) conn.pauseReading();
    this.deadline = this.edge.clock.now + this.epoch.limits.clientWriteTimeoutMs;
    this.socket.once('drain', this.onDrain);
  }

  private readonly onDrain = (): void => {
    this.resumeBackend();
    this.blocked = null;
    if (this.state === 'exchanging') this.deadline = Date.now() + this.epoch.limits.queryTimeoutMs;
    else if (this.state === 'ready') {
      this.deadline = this.edge.clock.now + this.epoch.limits.clientReadTimeoutMs;
      this.pump();
    }
  };

  /** Lets the connection this session paused read again (the drain came, or its response is complete). */
  private resumeBackend(): void {
    if (this.pausedBackend) this.blocked?.resumeReading();
    this.pausedBackend = false;
  }

  sendHeld(response: Buffer): void {
    if (this.state !== 'closed') this.socket.write(response);
  }

  sendError(err: MysqlError, seq: number): void {
    this.socket.write(errPacket(this.upload?.nextSeq ?? seq, err, this.capabilities));
  }

  applyResponse(kind: CommandKind, summary: ResponseSummary, ex: BackendExchange, conn: BackendConnection): void {
    applyStatementResponse(this, kind, summary, ex, conn);
  }

  pinnedConnectionLost(err: MysqlError, seq: number): void {
    if (this.state === 'closed') return;
    this.edge.metrics.errors.inc({ code: String(err.code) });
    this.sendError(err, seq);
    this.close('pinned backend connection lost', true);
  }

  commandDone(fatal: boolean): void {
    this.currentSql = null;
    const ex = this.ex;
    // a pending transaction opener is spent once it went out with a command (whatever the answer)
    if (ex !== null && this.pendingBegin !== null) {
      if (ex.beginPrelude === null) this.pendingBegin = null;
      ex.beginPrelude = null;
    }
    // the response is complete: nothing more of this session's is read from the connection, which
    // may already serve another session (released, parked, stolen), so it must not stay paused
    this.resumeBackend();
    const upload = this.upload;
    this.upload = null;
    upload?.finish();
    if (this.state === 'closed') return;
    if (fatal) return this.close('pinned backend connection lost', true);
    // the command ended before the file did: what the client still sends is file data, never commands
    if (upload !== null && !upload.ended) return this.close('LOAD DATA LOCAL upload cut short', true);
    this.transition('ready', 'done');
    // output still waiting for the client keeps the write deadline set when it blocked
    if (this.blocked === null) this.deadline = this.edge.clock.now + this.epoch.limits.clientReadTimeoutMs;
    if (this.edge.draining && !this.pinned) return this.close('draining', true);
    this.pump();
  }

  // --- local replies ---------------------------------------------------------------------------

  /** OK for a command the edge answers itself. */
  replyOk(seq = this.replySeq): void {
    this.socket.write(okPacket(seq, this.status(), this.capabilities));
    this.deadline = this.edge.clock.now + this.epoch.limits.clientReadTimeoutMs;
  }

  status(): number {
    const pin = this.ex?.pin ?? null;
    const open = pin === 'passthrough' ? this.ex?.transactionOpen === true : pin !== null && pin !== 'session_state' && pin !== 'cursor';
    return sessionStatus(this.autocommit, this.pendingBegin !== null || open);
  }

  /** A command refused by the edge: ERR, the session stays. */
  fail(err: unknown, seq = this.replySeq): void {
    const wire = toMysqlError(reportInternal(err, this.edge.logger, { session: this.id, state: this.state }));
    this.edge.metrics.errors.inc({ code: String(wire.code) });
    this.sendError(wire, seq);
    this.deadline = this.edge.clock.now + this.epoch.limits.clientReadTimeoutMs;
  }

  /** A protocol-level failure: ERR, then the connection closes. */
  fatal(err: unknown, seq: number): void {
    if (this.state === 'closed') return;
    const wire = toMysqlError(reportInternal(err, this.edge.logger, { session: this.id, state: this.state }));
    this.edge.metrics.errors.inc({ code: String(wire.code) });
    this.sendError(wire, seq);
    this.close(wire.message, true);
  }

  // --- login -----------------------------------------------------------------------------------

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  private startTls(early: Buffer | undefined): void {
    const context = this.edge.tls.context;
    const raw = this.socket as SessionSocket;
    if (!context) return this.fatal(MysqlEdgeErrors.handshake('TLS is not configured'), 2);
    raw.off('data', onData);
    const tls = upgradeToTls(raw, context, early) as TLSSocket & SessionSocket;
    tls[SESSION] = this;
    tls.on('data', onData);
    tls.on('error', onError);
    tls.once('secure', () => {
      this.secure = true;
      this.login?.secured();
    });
    this.socket = tls;
    this.direct = new DirectSocket(tls, -1);
  }

  passthrough(hello: HandshakeResponse, helloSeq: number, negotiated: Negotiated, route: RouteChoice | null | undefined): PassthroughRelay | null {
    return (this.relay = startPassthrough(this, hello, helloSeq, negotiated, route));
  }

  adoptPassthrough(conn: BackendConnection, shard: string): void {
    this.relay = null;
    this.passthroughAuth = true;
    this.exchange().adoptDedicated(conn, shard);
  }

  /** Where this session's statements run (its cluster): the route's shard, else the default shard. */
  get homeShard(): string {
    return this.route?.shard ?? this.epoch.defaultShard;
  }

  loginDone(result: LoginResult): void {
    if (!result.secure) queueMicrotask(() => this.readWithoutStream());
    this.login = null;
    this.user = result.user;
    this.route = result.route;
    countRoute(this.edge.metrics, result.route);
    this.schema = result.database;
    this.capabilities = result.capabilities;
    this.profile = result.profile;
    this.collation = result.collation;
    this.charsetKey = collationKey(result.collation);
    this.encoding = encodingForCollation(result.collation);
    this.edge.metrics.logins.inc({ result: 'ok', plugin: result.plugin, tls: String(result.secure) });
    this.transition('ready', 'authenticated');
    this.openedAt = Date.now();
    this.client = peerAddress(this.socket);
    publishOperationalEvent({ event: 'session_opened', protocol: 'mysql', session: this.connectionId, client: this.client, user: this.user, database: this.schema, listener: this.listener, tls: result.secure, ...routeFields(this.route) });
    this.deadline = this.edge.clock.now + this.epoch.limits.clientReadTimeoutMs;
  }

  /** After a plain login: the client socket's handle moves to an `onread` socket (adoptSocket, @dbproxy/runtime). */
  private readWithoutStream(): void {
    const raw = this.socket as SessionSocket;
    if (this.state === 'closed' || raw[SESSION] !== this) return;
    raw.off('data', onData);
    const adopted = adoptSocket(raw, (chunk) => this.receive(chunk)) as SessionSocket | null;
    if (adopted === null) return void raw.on('data', onData);
    raw.off('close', onClose);
    raw.off('error', onError);
    raw[SESSION] = undefined;
    raw.on('error', () => undefined); // the handle-less original is only destroyed, once the adopted one closes
    adopted[SESSION] = this;
    adopted.on('close', onClose);
    adopted.on('error', onError);
    this.socket = adopted;
    this.fd = descriptorOf(adopted);
    this.direct = new DirectSocket(adopted, this.fd);
  }

  loginFailed(err: unknown, seq: number, plugin: string, refusal: { readonly user: string; readonly reason: string }): void {
    if (MysqlEdgeErrors.noRoute.is(err)) countRouteRefused(this.edge.metrics);
    this.edge.metrics.logins.inc({ result: MysqlEdgeErrors.accessDenied.is(err) ? 'denied' : 'failed', plugin, tls: String(this.secure) });
    publishOperationalEvent({ event: 'login_failed', protocol: 'mysql', client: peerAddress(this.socket), user: refusal.user, listener: this.listener, reason: refusal.reason });
    this.fatal(err, seq);
  }

  /** Session state goes back to what the login gave (COM_RESET_CONNECTION, COM_CHANGE_USER). */
  resetState(): void {
    this.ex?.unpin();
    this.fanout?.reset();
    this.statements?.clear();
    this.statements = null;
    this.charsetSql = null;
    this.charsetKey = collationKey(this.collation);
    this.autocommit = true;
    this.lastWriteAt.clear();
    this.pendingBegin = null;
    this.transactionWrote = false;
    this.cacheWrites = null;
  }

  /** Called by the sweep about once a second. */
  checkDeadline(now: number): void {
    if (this.deadline === 0 || now < this.deadline) return;
    switch (this.state) {
      case 'login':
      case 'reauth':
        if (this.state === 'login') publishOperationalEvent({ event: 'login_failed', protocol: 'mysql', client: peerAddress(this.socket), user: '', listener: this.listener, reason: 'login timeout' });
        return this.fatal(MysqlEdgeErrors.loginTimeout(Math.round(this.epoch.limits.loginTimeoutMs / 1000)), 2);
      case 'ready':
        return this.close(this.blocked !== null ? 'client write timeout' : 'client read timeout');
      case 'routing':
      case 'exchanging':
        if (this.blocked !== null) return this.close('client write timeout');
        return this.ex?.timeout(MysqlEdgeErrors.queryTimeout(Math.round(this.epoch.limits.queryTimeoutMs / 1000)));
      default:
        return;
    }
  }

  /**
   * The shutdown deadline passed with the session open: ERR 1053 (ER_SERVER_SHUTDOWN, 08S01) as the
   * running command's answer, or unprompted with sequence id 0 between commands (as MySQL ends an
   * idle connection), then the connection closes.
   */
  shutDown(): void {
    if (this.state === 'closed') return;
    if (this.state === 'login' || this.state === 'reauth') return this.close('shutdown');
    const err = MysqlEdgeErrors.shuttingDown();
    const ex = this.runningExchange();
    if (this.state === 'ready' || ex === null) this.sendError(toMysqlError(err), 0);
    else ex.timeout(err);
    this.close('shutdown', true);
  }

  /** Ends the session; `graceful` lets written replies reach the client first. */
  close(reason: string, graceful = false): void {
    if (this.state === 'closed') return;
    this.transition('closed', reason);
    this.deadline = 0;
    // a connection this session paused may have been joined by others since: it reads on for them
    this.resumeBackend();
    this.blocked = null;
    this.upload?.finish();
    this.upload = null;
    this.relay?.cancel(reason);
    this.relay = null;
    this.ex?.close();
    this.fanout?.reset();
    this.statements?.clear();
    this.queue = null;
    this.edge.metrics.sessions.dec({ listener: this.listener });
    if (this.openedAt !== 0) {
      publishOperationalEvent({ event: 'session_closed', protocol: 'mysql', session: this.connectionId, client: this.client, user: this.user, listener: this.listener, duration_ms: Date.now() - this.openedAt, ...routeFields(this.route), reason: sessionCloseKind(reason), detail: reason });
    }
    this.edge.sessionClosed(this);
    this.edge.kills.ids.release(this.connectionId);
    const socket = this.socket as SessionSocket;
    socket[SESSION] = undefined;
    if (graceful) socket.end();
    else socket.destroy();
  }

  /** Whether the client negotiated `flag`. */
  has(flag: number): boolean {
    return hasFlag(this.capabilities, flag);
  }
}

/** Statements a pause holds (other commands, e.g. COM_PING or COM_QUIT, go on). */
function isStatement(packet: MysqlPacket): boolean {
  const command = packet.payload[0];
  return command === Command.Query || command === Command.StmtExecute;
}
