// A transparent-mode session: read the startup (TLS, shard key), open the chosen backend, forward
// the rewritten startup, swap BackendKeyData for our own, then pump bytes both ways untouched.
// One SERVER span covers the session, with a CLIENT child for the backend connection (statements
// are never parsed here: bytes are piped, so no statement boundary is seen and none is named).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';
import { DbSpan, tracerRecords } from '@dbproxy/observability';
import {
  BackendCode,
  decodeBackendMessage,
  encodeBackendMessages,
  encodeFrontendMessages,
  PgFramer,
  type Frame,
  type StartupMessage,
} from '@dbproxy/protocol-pg';
import type { RouteChoice } from '@dbproxy/routing';
import { errorMessage, peerAddress, publishOperationalEvent, sessionCloseKind } from '@dbproxy/util';
import type { BackendTarget } from '../backend-directory';
import { connectTcp, openBackendSocket, sendCancelRequest } from '../backend-socket';
import type { ProxyKey } from '../cancel-keys';
import { loginDeadlineMs, type EdgeContext, type EdgeEpoch, type ListenerRole } from '../edge-context';
import { isBackendUnavailable, isInternalError, logIfInternal, PgEdgeErrors, toErrorResponse } from '../errors';
import { readStartup, type StartupOutcome } from '../frontend-startup';
import { idleTimeout, type IdleWatched } from '../idle-sweep';
import { handleCancel, refuse, refuseAtStartup } from '../session-common';
import { countRoute } from '../startup-routes';
import { adoptSocketRaw, ByteReader, StateMachine, type RawListener, type SessionSnapshot } from '@dbproxy/runtime';
import { bindLifetimes, pump, relayTo } from './socket-pair';
import { sslAnswer } from './ssl-answer';
import { StreamWatch } from './stream-watch';

type State = 'startup' | 'connecting' | 'authenticating' | 'streaming' | 'closed';
const LEGAL: Record<State, readonly State[]> = {
  startup: ['connecting', 'closed'],
  connecting: ['startup', 'authenticating', 'streaming', 'closed'],
  authenticating: ['streaming', 'closed'],
  streaming: ['closed'],
  closed: [],
};
const ACCEPT_TLS = 0x53; // 'S'

type Resolution = ReturnType<EdgeEpoch['shardKey']['resolve']>;
type OnRefused = (err: unknown, client: Socket) => void;

export class TransparentSession implements IdleWatched {
  private readonly machine = new StateMachine<State>('pg_transparent_session', 'startup', LEGAL);
  private proxyKey: ProxyKey | undefined;
  private releaseLoad: (() => void) | undefined;
  private backend: Socket | undefined;
  private backendOf: string | undefined;
  private span: DbSpan | null | undefined;
  /** Admin id (GET /sessions, DELETE /v1/sessions/{id}), unique fleet-wide. */
  readonly adminId: string;
  private readonly startedAt = Date.now();
  private readonly clientAddress: string;
  /** The startup's user (null under TLS passthrough, which hides it), for GET /sessions and the operators' session lines. */
  private user: string | null = null;
  private database = '';
  /** The handshake route ([[postgres.routes]]) and the shard it chose; null without routes. */
  private route: RouteChoice | null = null;
  /** When the backend said ReadyForQuery (0 before): session lines are written from then on. */
  private openedAt = 0;
  private tls = false;
  /** The relayed streams' activity, from the first relayed byte on (proxy.client_read_timeout_seconds, shutdown). */
  private watch: StreamWatch | undefined;
  /** How the backend was chosen (primary, replica, fallback): the `route` of the latency series. */
  private backendRoute = '';
  private readonly startedPerf = performance.now();
  private readonly loginMs: number;

  constructor(
    /** The client's socket; replaced by the adopted one once its reads bypass the stream layer. */
    private client: Socket,
    private readonly listener: ListenerRole,
    private readonly edge: EdgeContext,
    private readonly epoch: EdgeEpoch,
  ) {
    this.loginMs = loginDeadlineMs(epoch.config);
    this.adminId = edge.sessionIds.allocate();
    this.clientAddress = peerAddress(client);
  }

  /**
   * This session as GET /sessions shows it. Its bytes are relayed without being read, so it has
   * no statement, and it is pinned to its backend for life.
   */
  describe(): SessionSnapshot {
    const state = this.machine.state;
    return {
      id: this.adminId,
      clientAddress: this.clientAddress,
      user: this.user ?? '',
      database: this.database,
      listener: this.listener,
      state: state === 'closed' ? 'closed' : this.backend ? 'pinned' : 'login',
      statement: null,
      backend: this.backendOf ?? null,
      pinnedReason: this.backend ? 'transparent mode' : null,
      epoch: this.epoch.epoch,
      startedAt: this.startedAt,
      bytesIn: this.client.bytesRead,
      bytesOut: this.client.bytesWritten,
      route: this.route?.route ?? null,
      shard: this.route?.shard ?? null,
    };
  }

  /**
   * An operator closed the session. The relayed stream is not framed (and may be TLS end to end),
   * so no ErrorResponse can be placed in it: both connections close (PostgreSQL ends the backend).
   */
  terminate(): void {
    this.destroy();
  }

  async run(): Promise<void> {
    this.edge.metrics.sessions.inc({ mode: 'transparent', listener: this.listener });
    this.client.once('close', () => this.edge.metrics.sessions.dec({ mode: 'transparent', listener: this.listener }));
    this.edge.idle.watch(this);
    try {
      const passthroughTls = !this.epoch.shardKey.enabled;
      const outcome = await readStartup(this.client, { tls: this.edge.tls, passthroughTls, deadlineMs: this.loginMs });
      await this.afterStartup(outcome);
    } catch (err) {
      this.fail(err, this.client);
    }
  }

  /** The backend the session is connected to, once it is. */
  get backendName(): string | undefined {
    return this.backendOf;
  }

  /** Ends the session now (shutdown, or `reason`). */
  destroy(reason = 'shutdown'): void {
    this.close(reason);
    this.client.destroy();
    this.backend?.destroy();
  }

  /** The shutdown deadline passed: FATAL 57P01 between two backend messages (as PostgreSQL shutting down), else just closed. */
  shutDown(): void {
    this.endWith(PgEdgeErrors.shutdownTerminated(), 'shutdown');
  }

  /**
   * The idle sweep: before streaming, the login deadline (connect, backend authentication); then
   * proxy.client_read_timeout_seconds while the backend waits for a silent client (57P05, or 25P03
   * in a transaction, as PostgreSQL's own idle timeouts).
   */
  checkIdle(nowMs: number): void {
    if (this.machine.is('closed')) return;
    if (!this.machine.is('streaming')) {
      if (nowMs - this.startedPerf < this.loginMs || this.machine.is('startup')) return; // readStartup has its own deadline
      this.edge.metrics.clientTimeouts.inc({ mode: 'transparent', kind: 'login' });
      return this.fail(PgEdgeErrors.loginTimeout(Math.round(this.loginMs / 1000)), this.client);
    }
    const timeoutMs = this.epoch.config.proxy.client_read_timeout_seconds * 1000;
    const watch = this.watch;
    if (!watch || watch.idleFor(nowMs) < timeoutMs) return;
    this.edge.metrics.clientTimeouts.inc({ mode: 'transparent', kind: 'idle' });
    this.endWith(idleTimeout(watch.inTransaction, timeoutMs), 'client idle');
  }

  /** Closes both sides; the client reads `error` first when the backend's stream is between two messages. */
  private endWith(error: Error, reason: string): void {
    if (this.machine.is('closed')) return;
    const between = this.machine.is('authenticating') || this.watch?.boundaries?.atBoundary === true;
    this.backend?.destroy();
    logIfInternal(this.edge.logger, error, { mode: 'transparent', reason });
    if (between) refuse(this.client, toErrorResponse(error, 'FATAL'));
    else this.client.destroy();
    this.close(reason);
  }

  private async afterStartup(outcome: StartupOutcome): Promise<void> {
    switch (outcome.kind) {
      case 'failed':
        return this.fail(outcome.error, outcome.socket);
      case 'cancel':
        this.close('cancel request');
        return handleCancel(this.edge, 'transparent', outcome.processId, outcome.secretKey, this.client);
      case 'ssl-passthrough':
        return this.passTlsThrough(outcome.socket, outcome.request);
      case 'startup':
        return this.startSession(outcome.socket, outcome.message, outcome.tls, outcome.remainder);
    }
  }

  /** Sharding is off: the client's TLS goes to the backend; we never see inside it. */
  private async passTlsThrough(client: Socket, request: Buffer): Promise<void> {
    // until the backend answers the SSLRequest, a refusal answers it first and follows the client's StartupMessage
    const refuseAfterSsl: OnRefused = (err, socket) => this.refuseAfterSsl(err, socket);
    const resolution = this.epoch.shardKey.resolve({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map() });
    this.machine.transition('startup', 'connecting', 'TLS passthrough');
    const connectTimeoutMs = this.epoch.config.postgres.connect_timeout_seconds * 1000;
    const opened = await this.openChosen(resolution, client, (target) => connectTcp(target.connectAddress, target.config.name, { timeoutMs: connectTimeoutMs }), refuseAfterSsl);
    if (!opened) return;
    const { backend, target } = opened;
    this.attachBackend(backend, target);
    backend.write(request);
    // the backend's one-byte answer to the SSLRequest, within the connect timeout (a silent or closing backend fails the client)
    let answer: Buffer;
    try {
      answer = await sslAnswer(backend, target.config.name, connectTimeoutMs);
    } catch (err) {
      return this.refuseAfterSsl(err, client);
    }
    if (answer.length !== 1 || answer[0] !== ACCEPT_TLS) {
      // The backend refused TLS: tell the client, and go on with its plaintext startup.
      backend.destroy();
      this.releaseLoad?.();
      this.backend = undefined;
      this.machine.transition('connecting', 'startup', 'backend refused TLS');
      client.write(answer.subarray(0, 1));
      const plain = { mode: 'disabled', context: undefined } as const;
      return this.afterStartup(await readStartup(client, { tls: plain, passthroughTls: false, deadlineMs: this.loginMs }));
    }
    const releasePassthrough = this.edge.cancelKeys.addPassthrough(target.connectAddress);
    backend.once('close', releasePassthrough);
    client.write(answer);
    this.machine.transition('connecting', 'streaming', 'TLS passed through');
    this.opened(true);
    this.wire(client, backend);
  }

  /** A refusal before the passed-through SSLRequest was answered: `N` (or our TLS), the StartupMessage, then the FATAL. */
  private refuseAfterSsl(err: unknown, client: Socket): void {
    this.backend?.destroy();
    this.close('failed');
    if (err !== undefined && this.span) this.span.fail(errorCodeOf(err), errorMessage(err));
    if (isBackendUnavailable(err)) this.edge.logger.warn({ backend: err.args[0], err }, 'pg-edge could not open a backend connection');
    else if (isInternalError(err)) logIfInternal(this.edge.logger, err, { mode: 'transparent', while: 'startup' }, 'warn');
    else this.edge.logger.debug({ err: errorMessage(err) }, 'transparent session refused');
    void refuseAtStartup(this.edge, client, toErrorResponse(err, 'FATAL'), Math.max(1000, this.loginMs - (performance.now() - this.startedPerf)), true);
  }

  /**
   * Opens a backend for the session. A replica that refuses the connection (nothing was sent to it
   * yet) is skipped for a while and another replica, or the primary with fallback_to_primary, is
   * tried: reads do not fail in the seconds before topology marks it down.
   */
  private async openChosen(resolution: Resolution, client: Socket, open: (target: BackendTarget) => Promise<Socket>, onRefused: OnRefused): Promise<{ backend: Socket; target: BackendTarget } | undefined> {
    for (let retried = false; ; retried = true) {
      const target = this.choose(resolution, client, onRefused);
      if (!target) return undefined;
      if (retried) this.edge.metrics.connectRetries.inc({ mode: 'transparent', to: target.role });
      try {
        return { backend: await open(target), target };
      } catch (err) {
        if (target.role !== 'replica' || client.destroyed) {
          this.edge.metrics.routingFailures.inc({ reason: 'backend_connect' });
          onRefused(err, client);
          return undefined;
        }
        this.edge.logger.debug({ backend: target.config.name, err: errorMessage(err) }, 'replica refused a connection: trying another backend');
        this.epoch.directory.markUnreachable(target.config.name);
      }
    }
  }

  private async startSession(client: Socket, startup: StartupMessage, tls: boolean, remainder: Buffer): Promise<void> {
    if (this.edge.tls.mode === 'required' && !tls) throw PgEdgeErrors.tlsRequired();
    this.tls = tls;
    this.machine.transition('startup', 'connecting', 'startup received');
    this.user = startup.parameters.get('user') ?? '';
    this.database = startup.parameters.get('database') ?? this.user;
    await this.connectAndForward(client, startup, remainder);
  }

  private async connectAndForward(client: Socket, startup: StartupMessage, remainder: Buffer): Promise<void> {
    this.user = startup.parameters.get('user') ?? '';
    const resolution = this.epoch.shardKey.resolve(startup);
    countRoute(this.edge.metrics, resolution);
    if (resolution.ok) this.route = resolution.route ?? null;
    if (!resolution.ok) {
      this.edge.metrics.startupRejections.inc({ reason: resolution.routeRefused ? 'route' : 'shard' });
      return this.fail(resolution.error, client);
    }
    const connectTimeoutMs = this.epoch.config.postgres.connect_timeout_seconds * 1000;
    const connectStarted = performance.now(); // the span is made by choose(), inside openChosen
    let reader: ByteReader | undefined;
    const open = (target: BackendTarget) => {
      // A plain backend is read without stream machinery (a TLS wrap keeps its stream).
      reader = target.config.tls.enabled ? undefined : new ByteReader();
      return openBackendSocket(target.config, target.connectAddress, { timeoutMs: connectTimeoutMs, onread: reader?.onread });
    };
    const opened = await this.openChosen(resolution, client, open, (err, socket) => this.fail(err, socket));
    if (!opened) return;
    const { backend, target } = opened;
    if (client.destroyed) return void backend.destroy();
    if (this.span) this.span.setAttribute('dbproxy.connect_ms', Math.round((performance.now() - connectStarted) * 1000) / 1000);
    this.attachBackend(backend, target);
    backend.write(remainder.length > 0 ? Buffer.concat([encodeFrontendMessages(resolution.message), remainder]) : encodeFrontendMessages(resolution.message));
    this.machine.transition('connecting', 'authenticating', `backend ${target.config.name}`);
    client = this.clientToBackend(client, backend);
    this.watchStartupReplies(client, backend, target, reader);
  }

  /** From now on the client's bytes go to the backend untouched: a plain client is read without the stream layer. */
  private clientToBackend(client: Socket, backend: Socket): Socket {
    const watch = (this.watch = new StreamWatch(false));
    // adoptSocketRaw never calls back synchronously: `relay` exists before the first read.
    const adopted = adoptSocketRaw(client, (buf, n) => {
      watch.fromClient();
      relay(buf, n);
    });
    if (adopted === null) {
      client.on('data', () => watch.fromClient());
      pump(client, backend);
      return client;
    }
    const relay = relayTo(backend, adopted);
    if (this.client === client) this.client = adopted;
    return adopted;
  }

  /** The backend for the session; on failure `client` (the socket the client speaks on now: TLS once terminated) gets the error. */
  private choose(resolution: Resolution, client: Socket, onRefused: OnRefused): BackendTarget | undefined {
    if (this.span === undefined) this.span = tracerRecords(this.edge.tracer) ? DbSpan.start(this.edge.tracer) : null;
    if (!resolution.ok) {
      onRefused(resolution.error, client);
      return undefined;
    }
    const pg = this.epoch.config.postgres;
    const load = { load: (name: string) => ({ inUse: this.edge.transparentLoad.get(name) ?? 0, waiters: 0, capacity: pg.max_connections }) };
    try {
      const choice = this.epoch.directory.require(resolution.shard, this.listener === 'read_write' ? 'primary' : 'replica', load, pg.fallback_to_primary);
      if (choice.fellBack) this.edge.metrics.fallbacks.inc({ mode: 'transparent' });
      this.backendRoute = choice.fellBack ? 'fallback' : (choice.target as BackendTarget).role;
      if (this.span) this.describeSpan(this.span, resolution, choice.target as BackendTarget, choice.fellBack);
      return choice.target;
    } catch (err) {
      this.edge.metrics.routingFailures.inc({ reason: 'no_backend' });
      onRefused(err, client);
      return undefined;
    }
  }

  private describeSpan(span: DbSpan, resolution: { shard: string; message: StartupMessage }, target: BackendTarget, fellBack: boolean): void {
    const parameters = resolution.message.parameters;
    span.describe({ system: 'postgresql', operation: 'SESSION', namespace: parameters.get('database') ?? parameters.get('user') ?? '' });
    span.backendCall(target.config.name, target.connectAddress);
    span.server.setAttributes({
      'dbproxy.user': parameters.get('user') ?? '',
      'dbproxy.mode': 'transparent',
      'dbproxy.listener': this.listener,
      'dbproxy.shard': resolution.shard,
      ...(this.route === null ? {} : { 'dbproxy.handshake_route': this.route.route }),
      'dbproxy.route': target.role,
      'dbproxy.backend': target.config.name,
      'dbproxy.fallback': fellBack,
    });
  }

  private attachBackend(backend: Socket, target: BackendTarget): void {
    this.backend = backend;
    const name = target.config.name;
    this.backendOf = name;
    this.edge.transparentLoad.set(name, (this.edge.transparentLoad.get(name) ?? 0) + 1);
    let released = false;
    this.releaseLoad = () => {
      if (released) return;
      released = true;
      this.edge.transparentLoad.set(name, (this.edge.transparentLoad.get(name) ?? 1) - 1);
    };
    backend.once('close', this.releaseLoad);
  }

  /** Until the first ReadyForQuery: forward authentication untouched, but hand out our own BackendKeyData. */
  private watchStartupReplies(client: Socket, backend: Socket, target: BackendTarget, reader: ByteReader | undefined): void {
    const framer = new PgFramer({ phase: 'typed', peer: 'backend' });
    let ready = false;
    bindLifetimes(client, backend, (reason) => this.close(reason));
    const onFrame = (frame: Frame) => {
      if (frame.code === BackendCode.BackendKeyData) {
        const processId = frame.payload.readInt32BE(0);
        const secretKey = frame.payload.readInt32BE(4);
        const address = target.connectAddress;
        this.proxyKey = this.edge.cancelKeys.issue(() => void sendCancelRequest(address, processId, secretKey));
        client.write(encodeBackendMessages({ type: 'BackendKeyData', ...this.proxyKey }));
        return;
      }
      if (frame.code === BackendCode.ErrorResponse) this.loginRefused(frame);
      client.write(frame.bytes);
      if (frame.code === BackendCode.ReadyForQuery) {
        ready = true;
        framer.stop();
      }
    };
    const onData = (chunk: Buffer): void => {
      if (this.machine.is('closed')) return;
      try {
        framer.push(chunk, onFrame);
      } catch (err) {
        backend.off('data', onData);
        return this.fail(err, client);
      }
      if (ready) {
        backend.off('data', onData);
        const watch = this.watch as StreamWatch;
        watch.loggedIn(this.edge.metrics.latency.series(this.listener, this.backendRoute, target.config.name));
        const rest = framer.takeRemainder();
        if (rest.length > 0) {
          watch.fromBackend(rest, rest.length);
          client.write(rest);
        }
        this.machine.transition('authenticating', 'streaming', 'ReadyForQuery');
        this.opened(this.tls);
        if (reader) reader.rawSink = watched(watch, relayTo(client, backend));
        else {
          backend.on('data', (chunk: Buffer) => watch.fromBackend(chunk, chunk.length));
          pump(backend, client);
        }
      }
    };
    if (reader) reader.sink = onData;
    else backend.on('data', onData);
  }

  private wire(client: Socket, backend: Socket): void {
    const watch = (this.watch = new StreamWatch(true));
    client.on('data', () => watch.fromClient());
    backend.on('data', (chunk: Buffer) => watch.fromBackend(chunk, chunk.length));
    bindLifetimes(client, backend, (reason) => this.close(reason));
    pump(client, backend);
    pump(backend, client);
    client.resume();
  }

  private fail(err: unknown, socket: Socket): void {
    if (err !== undefined && this.span) this.span.fail(errorCodeOf(err), errorMessage(err));
    if (err !== undefined && !socket.destroyed) {
      refuse(socket, toErrorResponse(err, 'FATAL'));
      if (isInternalError(err)) logIfInternal(this.edge.logger, err, { mode: 'transparent', while: 'startup' }, 'warn');
      else this.edge.logger.debug({ err: errorMessage(err) }, 'transparent session refused');
    } else socket.destroy();
    this.backend?.destroy();
    this.close('failed');
  }

  /** The backend refused the startup (a wrong password, an unknown database): the operators' failed-login line. */
  private loginRefused(frame: Frame): void {
    let reason = 'refused by the backend';
    try {
      const message = decodeBackendMessage(frame);
      if (message.type === 'ErrorResponse') reason = `${message.code}: ${message.message}`;
    } catch {
      // a malformed ErrorResponse still refused the login
    }
    publishOperationalEvent({ event: 'login_failed', protocol: 'postgres', client: this.clientAddress, user: this.user ?? '', listener: this.listener, reason });
  }

  private opened(tls: boolean): void {
    this.openedAt = Date.now();
    publishOperationalEvent({ event: 'session_opened', protocol: 'postgres', session: this.proxyKey?.processId ?? 0, client: this.clientAddress, user: this.user, listener: this.listener, tls, ...(this.route === null ? {} : { route: this.route.route, shard: this.route.shard }) });
  }

  private close(reason: string): void {
    if (this.machine.is('closed')) return;
    this.machine.transition(this.machine.state, 'closed', reason);
    if (this.openedAt !== 0) {
      publishOperationalEvent({ event: 'session_closed', protocol: 'postgres', session: this.proxyKey?.processId ?? 0, client: this.clientAddress, user: this.user, listener: this.listener, duration_ms: Date.now() - this.openedAt, ...(this.route === null ? {} : { route: this.route.route }), reason: sessionCloseKind(reason), detail: reason });
    }
    this.edge.idle.unwatch(this);
    if (this.proxyKey) this.edge.cancelKeys.revoke(this.proxyKey);
    this.releaseLoad?.();
    this.span?.end();
  }
}

/** The backend's reads as the session's stream watch sees them, then relayed. */
function watched(watch: StreamWatch, relay: RawListener): RawListener {
  return (buf, n) => {
    watch.fromBackend(buf, n);
    relay(buf, n);
  };
}

/** The edge's own error code (DbproxyError), else the error's class name. */
function errorCodeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'Error';
}
