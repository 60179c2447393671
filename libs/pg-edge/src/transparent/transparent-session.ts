// A transparent-mode session: read the startup (TLS, shard key), open the chosen backend, forward
// the rewritten startup, swap BackendKeyData for our own, then pump bytes both ways untouched.
// One SERVER span covers the session, with a CLIENT child for the backend connection (statements
// are never parsed here: bytes are piped, so no statement boundary is seen and none is named).
import type { Socket } from 'node:net';
import { DbSpan, tracerRecords } from '@dbproxy/observability';
import {
  BackendCode,
  encodeBackendMessages,
  encodeFrontendMessages,
  PgFramer,
  type Frame,
  type StartupMessage,
} from '@dbproxy/protocol-pg';
import { errorMessage } from '@dbproxy/util';
import type { BackendTarget } from '../backend-directory';
import { connectTcp, openBackendSocket, sendCancelRequest } from '../backend-socket';
import type { ProxyKey } from '../cancel-keys';
import { LOGIN_DEADLINE_MS, type EdgeContext, type EdgeEpoch, type ListenerRole } from '../edge-context';
import { PgEdgeErrors, toErrorResponse } from '../errors';
import { readStartup, type StartupOutcome } from '../frontend-startup';
import { handleCancel, refuse } from '../session-common';
import { adoptSocketRaw, ByteReader, StateMachine } from '@dbproxy/runtime';
import { bindLifetimes, pump, relayTo } from './socket-pair';

type State = 'startup' | 'connecting' | 'authenticating' | 'streaming' | 'closed';
const LEGAL: Record<State, readonly State[]> = {
  startup: ['connecting', 'closed'],
  connecting: ['startup', 'authenticating', 'streaming', 'closed'],
  authenticating: ['streaming', 'closed'],
  streaming: ['closed'],
  closed: [],
};
const ACCEPT_TLS = 0x53; // 'S'

export class TransparentSession {
  private readonly machine = new StateMachine<State>('pg_transparent_session', 'startup', LEGAL);
  private proxyKey: ProxyKey | undefined;
  private releaseLoad: (() => void) | undefined;
  private backend: Socket | undefined;
  private backendOf: string | undefined;
  private span: DbSpan | null | undefined;

  constructor(
    /** The client's socket; replaced by the adopted one once its reads bypass the stream layer. */
    private client: Socket,
    private readonly listener: ListenerRole,
    private readonly edge: EdgeContext,
    private readonly epoch: EdgeEpoch,
  ) {}

  async run(): Promise<void> {
    this.edge.metrics.sessions.inc({ mode: 'transparent', listener: this.listener });
    this.client.once('close', () => this.edge.metrics.sessions.dec({ mode: 'transparent', listener: this.listener }));
    try {
      const passthroughTls = !this.epoch.shardKey.enabled;
      const outcome = await readStartup(this.client, { tls: this.edge.tls, passthroughTls, deadlineMs: LOGIN_DEADLINE_MS });
      await this.afterStartup(outcome);
    } catch (err) {
      this.fail(err, this.client);
    }
  }

  /** The backend the session is connected to, once it is. */
  get backendName(): string | undefined {
    return this.backendOf;
  }

  /** Ends the session now (shutdown). */
  destroy(): void {
    this.client.destroy();
    this.backend?.destroy();
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
    const target = this.choose(this.epoch.shardKey.resolve({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map() }), client);
    if (!target) return;
    this.machine.transition('startup', 'connecting', 'TLS passthrough');
    const connectTimeoutMs = this.epoch.config.postgres.connect_timeout_seconds * 1000;
    const backend = await connectTcp(target.connectAddress, target.config.name, { timeoutMs: connectTimeoutMs });
    this.attachBackend(backend, target);
    backend.write(request);
    // the backend's one-byte answer to the SSLRequest, within the connect timeout (a silent or closing backend fails the client)
    const answer = await sslAnswer(backend, target.config.name, connectTimeoutMs);
    if (answer.length !== 1 || answer[0] !== ACCEPT_TLS) {
      // The backend refused TLS: tell the client, and go on with its plaintext startup.
      backend.destroy();
      this.releaseLoad?.();
      this.backend = undefined;
      this.machine.transition('connecting', 'startup', 'backend refused TLS');
      client.write(answer.subarray(0, 1));
      const plain = { mode: 'disabled', context: undefined } as const;
      return this.afterStartup(await readStartup(client, { tls: plain, passthroughTls: false, deadlineMs: LOGIN_DEADLINE_MS }));
    }
    const releasePassthrough = this.edge.cancelKeys.addPassthrough(target.connectAddress);
    backend.once('close', releasePassthrough);
    client.write(answer);
    this.machine.transition('connecting', 'streaming', 'TLS passed through');
    this.wire(client, backend);
  }

  private async startSession(client: Socket, startup: StartupMessage, tls: boolean, remainder: Buffer): Promise<void> {
    if (this.edge.tls.mode === 'required' && !tls) throw PgEdgeErrors.tlsRequired();
    this.machine.transition('startup', 'connecting', 'startup received');
    await this.connectAndForward(client, startup, remainder);
  }

  private async connectAndForward(client: Socket, startup: StartupMessage, remainder: Buffer): Promise<void> {
    const resolution = this.epoch.shardKey.resolve(startup);
    if (!resolution.ok) {
      this.edge.metrics.startupRejections.inc({ reason: 'shard' });
      return this.fail(resolution.error, client);
    }
    const target = this.choose(resolution, client);
    if (!target) return;
    const connectTimeoutMs = this.epoch.config.postgres.connect_timeout_seconds * 1000;
    const connectStarted = this.span ? performance.now() : 0;
    let backend: Socket;
    // A plain backend is read without stream machinery (a TLS wrap keeps its stream).
    const reader = target.config.tls.enabled ? undefined : new ByteReader();
    try {
      backend = await openBackendSocket(target.config, target.connectAddress, { timeoutMs: connectTimeoutMs, onread: reader?.onread });
    } catch (err) {
      this.edge.metrics.routingFailures.inc({ reason: 'backend_connect' });
      return this.fail(err, client);
    }
    if (client.destroyed) return void backend.destroy();
    if (connectStarted > 0) this.span?.setAttribute('dbproxy.connect_ms', Math.round((performance.now() - connectStarted) * 1000) / 1000);
    this.attachBackend(backend, target);
    backend.write(remainder.length > 0 ? Buffer.concat([encodeFrontendMessages(resolution.message), remainder]) : encodeFrontendMessages(resolution.message));
    this.machine.transition('connecting', 'authenticating', `backend ${target.config.name}`);
    client = this.clientToBackend(client, backend);
    this.watchStartupReplies(client, backend, target, reader);
  }

  /** From now on the client's bytes go to the backend untouched: a plain client is read without the stream layer. */
  private clientToBackend(client: Socket, backend: Socket): Socket {
    // adoptSocketRaw never calls back synchronously: `relay` exists before the first read.
    const adopted = adoptSocketRaw(client, (buf, n) => relay(buf, n));
    if (adopted === null) {
      pump(client, backend);
      return client;
    }
    const relay = relayTo(backend, adopted);
    if (this.client === client) this.client = adopted;
    return adopted;
  }

  /** The backend for the session; on failure `client` (the socket the client speaks on now: TLS once terminated) gets the error. */
  private choose(resolution: ReturnType<EdgeEpoch['shardKey']['resolve']>, client: Socket): BackendTarget | undefined {
    if (this.span === undefined) this.span = tracerRecords(this.edge.tracer) ? DbSpan.start(this.edge.tracer) : null;
    if (!resolution.ok) {
      this.fail(resolution.error, client);
      return undefined;
    }
    const pg = this.epoch.config.postgres;
    const load = { load: (name: string) => ({ inUse: this.edge.transparentLoad.get(name) ?? 0, waiters: 0, capacity: pg.max_connections }) };
    try {
      const choice = this.epoch.directory.require(resolution.shard, this.listener === 'read_write' ? 'primary' : 'replica', load, pg.fallback_to_primary);
      if (choice.fellBack) this.edge.metrics.fallbacks.inc({ mode: 'transparent' });
      if (this.span) this.describeSpan(this.span, resolution, choice.target as BackendTarget, choice.fellBack);
      return choice.target;
    } catch (err) {
      this.edge.metrics.routingFailures.inc({ reason: 'no_backend' });
      this.fail(err, client);
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
        const rest = framer.takeRemainder();
        if (rest.length > 0) client.write(rest);
        this.machine.transition('authenticating', 'streaming', 'ReadyForQuery');
        if (reader) reader.rawSink = relayTo(client, backend);
        else pump(backend, client);
      }
    };
    if (reader) reader.sink = onData;
    else backend.on('data', onData);
  }

  private wire(client: Socket, backend: Socket): void {
    bindLifetimes(client, backend, (reason) => this.close(reason));
    pump(client, backend);
    pump(backend, client);
    client.resume();
  }

  private fail(err: unknown, socket: Socket): void {
    if (err !== undefined && this.span) this.span.fail(errorCodeOf(err), errorMessage(err));
    if (err !== undefined && !socket.destroyed) {
      refuse(socket, toErrorResponse(err, 'FATAL'));
      this.edge.logger.debug({ err: errorMessage(err) }, 'transparent session refused');
    } else socket.destroy();
    this.backend?.destroy();
    this.close('failed');
  }

  private close(reason: string): void {
    if (this.machine.is('closed')) return;
    this.machine.transition(this.machine.state, 'closed', reason);
    if (this.proxyKey) this.edge.cancelKeys.revoke(this.proxyKey);
    this.releaseLoad?.();
    this.span?.end();
  }
}

/** The edge's own error code (DbproxyError), else the error's class name. */
function errorCodeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'Error';
}

/** The first bytes the backend sends after the SSLRequest; rejects when it closes, errs or says nothing for `timeoutMs`. */
function sslAnswer(backend: Socket, name: string, timeoutMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const settle = (error: Error | undefined, answer?: Buffer) => {
      clearTimeout(timer);
      backend.off('data', onData);
      backend.off('close', onClose);
      backend.off('error', onError);
      if (error) reject(error);
      else resolve(answer as Buffer);
    };
    const onData = (chunk: Buffer) => settle(undefined, chunk);
    const onClose = () => settle(PgEdgeErrors.backendTls(name, 'the backend closed the connection after the SSLRequest'));
    const onError = (err: Error) => settle(PgEdgeErrors.backendTls.withCause(err, name, errorMessage(err)));
    const timer = setTimeout(() => settle(PgEdgeErrors.backendTls(name, `no answer to the SSLRequest within ${timeoutMs / 1000} s`)), timeoutMs);
    backend.on('data', onData);
    backend.once('close', onClose);
    backend.once('error', onError);
  });
}
