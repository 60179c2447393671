// Opening one pooled backend connection: TCP (and TLS when configured), the server's greeting,
// authentication with the pool's credentials, then the setup queries every pooled connection
// needs. Runs once per connection, off the query path.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import {
  ClientAuthExchange,
  Command,
  PacketFramer,
  PacketWriter,
  ResponseTracker,
  decodeErr,
  decodeInitialHandshake,
  encodeHandshakeResponse,
  encodeQuery,
  encodeSslRequest,
  isErrPacket,
  textRowCells,
  type InitialHandshake,
  type MysqlPacket,
} from '@dbproxy/protocol-mysql';
import { errorMessage } from '@dbproxy/util';
import { MysqlEdgeErrors } from '../errors';
import { ByteReader } from '@dbproxy/runtime';
import { BACKEND_COLLATION } from './collations';

export interface BackendTls {
  readonly options: ConnectionOptions;
}

/** Where and as whom a pool connects. */
export interface BackendEndpoint {
  readonly backend: string;
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly password: string;
  readonly tls: BackendTls | null;
  /** Bytes sent before anything else (a PROXY protocol header, see proxy-origin.ts); absent: none. */
  readonly proxyHeader?: Buffer | null;
}

export interface SetupQuery {
  readonly sql: string;
  /** Receives the text rows' cells when the query returns a result set. */
  readonly rows?: (cells: (Buffer | null)[][]) => void;
}

export interface OpenedBackend {
  readonly socket: Socket;
  readonly framer: PacketFramer;
  readonly handshake: InitialHandshake;
  /** Capabilities in force on the connection (ours ∩ the server's). */
  readonly capabilities: number;
  /** MariaDB extended capabilities in force (ours ∩ the server's). */
  readonly mariaDbCapabilities: number;
  /** Where a plain TCP socket's reads go (no stream layer); null for TLS, whose reads are 'data' events. */
  readonly reader: ByteReader | null;
}

/** Reads packets off a socket during the handshake, one awaited at a time. */
export class HandshakePump {
  private readonly queue: MysqlPacket[] = [];
  private waiting: { resolve: (p: MysqlPacket) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;
  private readonly onData = (chunk: Buffer) => {
    try {
      this.framer.feed(chunk, (p) => void this.queue.push(p));
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
    this.wake();
  };
  private readonly onEnd = () => this.fail(new Error('the server closed the connection'));
  private readonly onError = (err: Error) => this.fail(err);

  constructor(
    private readonly socket: Socket,
    private readonly framer: PacketFramer,
    private readonly reader: ByteReader | null,
  ) {
    if (reader) reader.sink = this.onData;
    else socket.on('data', this.onData);
    socket.on('close', this.onEnd);
    socket.on('error', this.onError);
  }

  next(): Promise<MysqlPacket> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.wake();
  }

  detach(): void {
    this.reader?.release();
    this.socket.off('data', this.onData);
    this.socket.off('close', this.onEnd);
    this.socket.off('error', this.onError);
  }

  private wake(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    const queued = this.queue.shift();
    if (queued) {
      this.waiting = null;
      waiting.resolve(queued);
    } else if (this.failure) {
      this.waiting = null;
      waiting.reject(this.failure);
    }
  }
}

/** `reader`: read without the stream layer (plain TCP only; TLS wraps the socket as a stream). */
export function tcpConnect(endpoint: BackendEndpoint, signal: AbortSignal, reader: ByteReader | null): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const options = { host: endpoint.host, port: endpoint.port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000 };
    const socket = netConnect(reader ? { ...options, onread: reader.onread } : options);
    const onAbort = () => {
      socket.destroy();
      reject(signal.reason instanceof Error ? signal.reason : new Error('connect aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(MysqlEdgeErrors.backendConnect(endpoint.backend, err.message));
    });
    socket.once('connect', () => {
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners('error');
      if (endpoint.proxyHeader) socket.write(endpoint.proxyHeader);
      resolve(socket);
    });
  });
}

export function upgradeTls(socket: Socket, endpoint: BackendEndpoint, tls: BackendTls): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({ ...tls.options, socket, servername: tls.options.servername ?? endpoint.host });
    secure.once('secureConnect', () => {
      secure.removeAllListeners('error');
      resolve(secure);
    });
    secure.once('error', (err) => reject(MysqlEdgeErrors.backendConnect(endpoint.backend, `TLS: ${err.message}`)));
  });
}

/** Connects, authenticates and runs the setup queries; the abort signal (connect timeout, drain) ends it. */
export async function openBackend(endpoint: BackendEndpoint, capabilities: number, setup: readonly SetupQuery[], signal: AbortSignal, mariaDbCapabilities = 0): Promise<OpenedBackend> {
  const reader = endpoint.tls ? null : new ByteReader();
  let socket = await tcpConnect(endpoint, signal, reader);
  let framer = new PacketFramer();
  let pump = new HandshakePump(socket, framer, reader);
  const onAbort = () => pump.fail(signal.reason instanceof Error ? signal.reason : new Error('connect aborted'));
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const greeting = await pump.next();
    if (isErrPacket(greeting.payload)) throw MysqlEdgeErrors.backendConnect(endpoint.backend, decodeErr(greeting.payload).message);
    const handshake = decodeInitialHandshake(greeting.payload);
    const auth = new ClientAuthExchange({ username: endpoint.username, password: endpoint.password, secure: endpoint.tls !== null, capabilities, characterSet: BACKEND_COLLATION, mariaDbCapabilities });
    const w = new PacketWriter(256);
    let seq = 1;
    const response = auth.respond(handshake);
    if (endpoint.tls) {
      seq = encodeSslRequest(w, seq, { capabilities: response.capabilities, characterSet: response.characterSet, mariaDbCapabilities: auth.mariaDbCapabilities });
      socket.write(w.flush());
      pump.detach();
      socket = await upgradeTls(socket, endpoint, endpoint.tls);
      framer = new PacketFramer();
      pump = new HandshakePump(socket, framer, null);
    }
    encodeHandshakeResponse(w, seq, response);
    socket.write(w.flush());
    await authenticate(pump, socket, auth, w, endpoint.backend);
    for (const query of setup) await runSetupQuery(pump, socket, w, auth.capabilities, query, endpoint.backend);
    pump.detach();
    return { socket, framer, handshake, capabilities: auth.capabilities, mariaDbCapabilities: auth.mariaDbCapabilities, reader };
  } catch (err) {
    throw abandonHandshake(pump, socket, endpoint.backend, err);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A handshake (pooled or passthrough) that failed: its socket is closed; an error of dbproxy's own
 * goes on as it is, anything else becomes DBP_ERR_MYSQLEDGE_BACKEND_CONNECT (the client reads a
 * stable text for that code, the detail is for the edge log).
 */
export function abandonHandshake(pump: HandshakePump, socket: Socket, backend: string, err: unknown): unknown {
  pump.detach();
  socket.destroy();
  if (err instanceof Error && 'code' in err && String(err.code).startsWith('DBP_ERR_')) return err;
  return MysqlEdgeErrors.backendConnect.withCause(err, backend, errorMessage(err));
}

async function authenticate(pump: HandshakePump, socket: Socket, auth: ClientAuthExchange, w: PacketWriter, backend: string): Promise<void> {
  for (;;) {
    const packet = await pump.next();
    const step = auth.next(packet.payload);
    switch (step.kind) {
      case 'done':
        return;
      case 'failed':
        throw MysqlEdgeErrors.backendAuth(backend, `${step.err.code} ${step.err.message}`);
      case 'wait':
        continue;
      case 'send':
        w.begin(packet.sequenceId + 1).bytes(step.data);
        w.end();
        socket.write(w.flush());
    }
  }
}

export async function runSetupQuery(pump: HandshakePump, socket: Socket, w: PacketWriter, capabilities: number, query: SetupQuery, backend: string): Promise<void> {
  encodeQuery(w, query.sql, capabilities);
  socket.write(w.flush());
  const tracker = new ResponseTracker({ capabilities });
  tracker.begin(Command.Query);
  const rows: (Buffer | null)[][] = [];
  let columns = 0;
  do {
    const packet = await pump.next();
    const step = tracker.feed(packet);
    if (step.role === 'column-count') columns = packet.payload[0] ?? 0;
    else if (step.role === 'row') rows.push(textRowCells(packet.payload, columns));
  } while (!tracker.complete);
  const err = tracker.summary.err;
  if (err) throw MysqlEdgeErrors.backendConnect(backend, `${query.sql}: ${err.code} ${err.message}`);
  query.rows?.(rows);
}
