// Connection mode: the first command may be DBPROXY.SHARD <value>; once the shard is known the
// client is connected to its primary (read-write listener) or a weighted replica (read-only
// listener) and bytes flow both ways unchanged - pipelines, MULTI, pub/sub, RESP3 pushes, AUTH.
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { SpanKind, type Span } from '@opentelemetry/api';
import { CommandScanner, InputBuffer, type CommandBatch } from '@dbproxy/resp';
import { errorMessage, peerAddress, publishOperationalEvent, sessionCloseKind } from '@dbproxy/util';
import { errorReply, RedisEdgeErrors } from '../errors';
import { adoptSocketRaw, descriptorOf, DirectSocket, onreadRaw, readSocket, StateMachine, type SessionSnapshot } from '@dbproxy/runtime';
import { dialBackend, splitAddress, TLS_FILES_UNREADABLE } from '../io/dial';
import type { ConnectionEdge } from './connection-edge';
import { CONNECTION_ROUTE, ExchangeTiming } from './exchange-timing';

export type ConnectionState = 'awaiting-shard' | 'connecting' | 'piping' | 'closed';
export type ListenerRole = 'read_write' | 'read_only';

const LEGAL: Readonly<Record<ConnectionState, readonly ConnectionState[]>> = {
  'awaiting-shard': ['connecting', 'closed'],
  connecting: ['piping', 'closed'],
  piping: ['closed'],
  closed: [],
};

const OK = Buffer.from('+OK\r\n');
/** `*1\r\n$4\r\nQUIT\r\n` is 14 bytes, `QUIT\r\n` inline 6: only reads this short may be a lone QUIT. */
const QUIT_READ_MAX = 16;
const EMPTY_ARRAY = Buffer.from('*0\r\n');

export class ConnectionSession {
  private readonly machine = new StateMachine<ConnectionState>('redis-connection-session', 'awaiting-shard', LEGAL);
  private readonly input = new InputBuffer();
  private readonly scanner: CommandScanner;
  /** Client bytes that arrived while the backend connection was opening. */
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  private backend: Socket | undefined;
  private backendName: string | undefined;
  private clientEnded = false;
  private span: Span | undefined;
  /** dbproxy_statement_duration_seconds of this session's exchanges, bound once the backend is chosen. */
  private timing: ExchangeTiming | undefined;
  /** Admin id (GET /sessions, DELETE /v1/sessions/{id}), unique fleet-wide. */
  readonly adminId: string;
  private readonly startedAt = Date.now();
  private readonly clientAddress: string;
  private readonly epoch: number;
  /** The client's last small write was a QUIT: the backend's close that follows is the client's doing. */
  private quitSent = false;
  private readonly openedAt = Date.now();

  /** The client's socket, read without the stream layer (adoptSocketRaw, @dbproxy/runtime) when it is plain TCP. */
  private readonly client: Socket;
  /** Descriptors written past the stream layer once piping (-1: TLS or none, the stream writes). */
  private clientFd = -1;
  private backendFd = -1;
  /** The sockets written past their streams while piping (DirectSocket: their stream state read once). */
  private readonly clientOut: DirectSocket;
  private backendOut: DirectSocket | undefined;

  constructor(
    accepted: Socket,
    private readonly listener: ListenerRole,
    private readonly edge: ConnectionEdge,
  ) {
    const settings = edge.settings();
    this.adminId = edge.admin.ids.allocate();
    this.epoch = edge.admin.epoch();
    this.scanner = new CommandScanner({ queryBufferLimit: settings.queryBufferLimit, maxBulkLength: settings.maxBulkBytes });
    // A half-close is passed on to the backend, whose replies still come back.
    this.clientAddress = peerAddress(accepted); // before the handle moves to the adopted socket
    // plain TCP: reads arrive in the shared scratch (clientRead); TLS: as stream chunks
    const client = adoptSocketRaw(accepted, (buf, n) => this.clientRead(buf, n), true) ?? readSocket(accepted, (chunk) => this.clientBytes(chunk), true);
    this.client = client;
    if (!(client instanceof TLSSocket)) this.clientFd = descriptorOf(client);
    this.clientOut = new DirectSocket(client, this.clientFd);
    client.once('end', () => {
      this.clientEnded = true;
      if (this.machine.is('piping')) this.backend?.end();
      else if (this.machine.is('awaiting-shard')) this.close('client ended before a command');
    });
    client.on('error', (err) => this.close(`client error: ${errorMessage(err)}`));
    client.once('close', () => this.close('client closed'));
    client.setTimeout(settings.idleTimeoutMs);
    client.once('timeout', () => this.machine.is('awaiting-shard') && this.close('no command within proxy.client_read_timeout_seconds'));
    edge.metrics.sessions.inc({ mode: 'connection', listener });
    publishOperationalEvent({ event: 'session_opened', protocol: 'redis', session: this.machine.id, client: this.clientAddress, user: null, listener });
  }

  /**
   * A client read in the shared scratch, `buf[0, n)`, valid only during the call: piped straight
   * from it to the backend's descriptor (only what the kernel does not take is copied into the
   * stream); before piping it is copied, as those bytes are held or parsed.
   */
  private clientRead(buf: Buffer, n: number): void {
    if (!this.machine.is('piping')) return this.clientBytes(Buffer.from(buf.subarray(0, n)));
    this.quitSent = n <= QUIT_READ_MAX && mentionsQuit(buf, n);
    (this.timing as ExchangeTiming).clientSent();
    if (!(this.backendOut as DirectSocket).writeCopying(buf, n)) this.client.pause();
  }

  private clientBytes(chunk: Buffer): void {
    if (this.machine.is('piping')) {
      this.quitSent = chunk.length <= QUIT_READ_MAX && mentionsQuit(chunk, chunk.length);
      (this.timing as ExchangeTiming).clientSent();
      if (!(this.backend as Socket).write(chunk)) this.client.pause();
    } else if (this.machine.is('awaiting-shard')) {
      this.input.append(chunk, this.scanner.needBytes);
      this.examineFirstCommand();
    } else if (this.machine.is('connecting')) this.hold(chunk);
  }

  private examineFirstCommand(): void {
    let batch: CommandBatch;
    try {
      batch = this.scanner.scan(this.input.buffer, this.input.start, this.input.end, 1);
    } catch (err) {
      return this.refuse(err, 'protocol');
    }
    if (batch.count === 0) {
      this.input.consume(batch.consumed);
      return;
    }
    if (batch.argEquals(0, 0, 'DBPROXY.SHARD')) return this.shardCommand(batch);
    if (batch.argCount[0] === 2 && batch.argEquals(0, 0, 'COMMAND') && batch.argEquals(0, 1, 'DOCS')) return this.answerCommandDocs(batch);
    const shard = this.edge.selector().withoutShardCommand();
    if (shard instanceof Error) return this.refuse(shard, 'missing');
    this.route(shard, 'default', this.input.buffer.subarray(batch.frameStart[0], this.input.end));
  }

  /** redis-cli asks COMMAND DOCS before sending anything else: answered empty, the shard command may still follow. */
  private answerCommandDocs(batch: CommandBatch): void {
    this.client.write(EMPTY_ARRAY);
    this.input.consume(batch.frameEnd[0]);
    if (this.input.length > 0) this.examineFirstCommand();
  }

  private shardCommand(batch: CommandBatch): void {
    if (batch.argCount[0] !== 2) return this.refuse(RedisEdgeErrors.shardArguments(), 'invalid');
    const shard = this.edge.selector().resolve(batch.argToString(0, 1));
    if (shard instanceof Error) return this.refuse(shard, RedisEdgeErrors.shardUnmapped.is(shard) ? 'unmapped' : 'invalid');
    this.client.write(OK);
    this.route(shard, 'shard_command', this.input.buffer.subarray(batch.frameEnd[0], this.input.end));
  }

  /** Chooses the backend for `shard` and connects; `rest` (bytes after the shard command) goes first. */
  private route(shard: string, how: string, rest: Buffer): void {
    const target = this.edge.backendFor(shard, this.listener);
    if (target instanceof Error) return this.refuse(target, 'no_backend');
    this.machine.transition('awaiting-shard', 'connecting', `shard ${shard} (${how})`);
    this.edge.metrics.shardSelections.inc({ listener: this.listener, shard, how });
    this.client.setTimeout(0);
    if (rest.length > 0) this.hold(Buffer.from(rest));
    this.backendName = target.name;
    this.edge.opened(target.name);
    const { host, port } = splitAddress(target.address);
    this.span = this.edge.tracer.startSpan('redis session', { kind: SpanKind.SERVER, attributes: { 'db.system.name': 'redis', 'server.address': host, 'server.port': port, 'dbproxy.shard': shard, 'dbproxy.backend': target.name, 'dbproxy.listener': this.listener } });
    const timing = (this.timing = new ExchangeTiming(this.edge.metrics.latency.series(this.listener, CONNECTION_ROUTE, target.name).statement));
    const toClient = (chunk: Buffer) => {
      timing.backendAnswered();
      return this.client.write(chunk) || backend.pause();
    };
    // plaintext backend reads arrive in the shared scratch and go straight to the client's descriptor
    const rawToClient = (buf: Buffer, n: number) => {
      timing.backendAnswered();
      return this.clientOut.writeCopying(buf, n) || backend.pause();
    };
    let dialed;
    try {
      dialed = dialBackend(target.address, { tls: target.tls, allowHalfOpen: true, onread: onreadRaw(rawToClient), onData: toClient });
    } catch (err) {
      return this.failConnect(target, TLS_FILES_UNREADABLE, `TLS files: ${errorMessage(err)}`);
    }
    const backend = dialed.socket;
    this.backend = backend;
    backend.setTimeout(this.edge.settings().connectTimeoutMs);
    backend.once('timeout', () => this.machine.is('connecting') && this.failConnect(target, 'timed out'));
    backend.once(dialed.readyEvent, () => this.piped(backend));
    backend.on('error', (err) => (this.machine.is('connecting') ? this.failConnect(target, errorMessage(err)) : this.close(`backend error: ${errorMessage(err)}`)));
    backend.once('close', () => this.close(this.quitSent ? 'client quit (QUIT)' : 'backend closed'));
  }

  private hold(chunk: Buffer): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes > this.edge.settings().queryBufferLimit) this.client.pause();
  }

  private piped(backend: Socket): void {
    this.machine.transition('connecting', 'piping', 'backend connected');
    backend.setTimeout(0);
    if (!(backend instanceof TLSSocket)) this.backendFd = descriptorOf(backend);
    this.backendOut = new DirectSocket(backend, this.backendFd);
    const client = this.client;
    if (this.pending.length > 0) {
      (this.timing as ExchangeTiming).clientSent();
      backend.write(this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending));
    }
    this.pending.length = 0;
    // Both directions as they arrive (clientBytes, the backend's onread), each paused while the other side's socket buffers.
    backend.on('drain', () => client.resume());
    client.on('drain', () => backend.resume());
    backend.once('end', () => client.end());
    if (this.clientEnded) backend.end();
    client.resume();
  }

  /** The client reads only "backend <name> is unavailable"; `logged` (default: `detail`) and the address go into the session's close reason. */
  private failConnect(target: { readonly name: string; readonly address: string }, detail: string, logged = detail): void {
    this.edge.metrics.backendErrors.inc({ kind: 'connect' });
    this.client.end(errorReply(RedisEdgeErrors.backendConnect(target.name, `${target.address}: ${detail}`)));
    this.close(`backend connect failed: ${target.name} (${target.address}): ${logged}`);
  }

  private refuse(err: unknown, reason: string): void {
    this.edge.metrics.shardRefusals.inc({ reason });
    this.client.end(errorReply(err));
    this.close(`refused: ${errorMessage(err)}`);
  }

  /**
   * This session as GET /sessions shows it: its bytes are piped unread once the backend is chosen,
   * so it has no statement, and the user and db are whatever the client sent the backend.
   */
  describe(): SessionSnapshot {
    const state = this.machine.state;
    return {
      id: this.adminId,
      clientAddress: this.clientAddress,
      user: '',
      database: '',
      listener: this.listener,
      state: state === 'piping' ? 'pinned' : state === 'closed' ? 'closed' : 'login',
      statement: null,
      backend: this.backendName ?? null,
      pinnedReason: state === 'piping' ? 'connection mode' : null,
      epoch: this.epoch,
      startedAt: this.startedAt,
      bytesIn: this.client.bytesRead,
      bytesOut: this.client.bytesWritten,
    };
  }

  /** An operator closed the session: `-ERR <reason>` (after whatever the backend sent so far), then the close. */
  terminate(reason: string): void {
    if (this.machine.is('closed')) return;
    this.client.end(errorReply(RedisEdgeErrors.adminKilled(reason)));
    this.close('killed by an administrator');
  }

  /** The backend the session is piped to, once chosen. */
  get servedBy(): string | undefined {
    return this.backendName;
  }

  /** The shutdown deadline passed: `-ERR` after what the backend sent so far (a relay knows no reply boundaries), then the close. */
  shutDown(): void {
    if (this.machine.is('closed')) return;
    this.backend?.destroy();
    if (!this.client.writableEnded) this.client.end(errorReply(RedisEdgeErrors.shuttingDown()));
    this.close('shutdown');
  }

  close(reason: string): void {
    if (this.machine.is('closed')) return;
    this.machine.transition(this.machine.state, 'closed', reason);
    this.edge.metrics.sessions.dec({ mode: 'connection', listener: this.listener });
    publishOperationalEvent({ event: 'session_closed', protocol: 'redis', session: this.machine.id, client: this.clientAddress, user: null, listener: this.listener, duration_ms: Date.now() - this.openedAt, reason: sessionCloseKind(reason), detail: reason });
    if (this.backendName !== undefined) this.edge.closed(this.backendName);
    this.span?.end();
    this.backend?.destroy();
    if (!this.client.writableEnded) this.client.destroy();
    else this.client.once('finish', () => this.client.destroy());
  }
}

/** True when `buf[0, n)` contains "quit" in any case (a lone QUIT command, inline or as an array). */
function mentionsQuit(buf: Buffer, n: number): boolean {
  for (let i = 0; i + 4 <= n; i++) {
    if ((buf[i] as number | 0x20) === 0x71 && (buf[i + 1] as number | 0x20) === 0x75 && (buf[i + 2] as number | 0x20) === 0x69 && (buf[i + 3] as number | 0x20) === 0x74) return true;
  }
  return false;
}
