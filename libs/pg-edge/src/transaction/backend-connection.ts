// One authenticated connection to a backend, as transaction mode's pools hold it: startup with the
// backend's credentials (SCRAM, md5 or cleartext) over optional TLS, then frames to whoever holds it.
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import {
  BackendCode as BackendCodeExport,
  decodeBackendMessage,
  encodeFrontendMessages,
  md5PasswordResponse,
  PgFramer,
  ScramClientSession,
  typedFrameAt,
  type BackendMessage,
  type Frame,
  type FrontendMessage,
} from '@dbproxy/protocol-pg';
import { errorMessage } from '@dbproxy/util';
import type { BackendConfig } from '../backend-directory';
import { openBackendSocket } from '../backend-socket';
import { PgEdgeErrors } from '../errors';
import { BackendStatements } from './backend-statements';
import { ByteReader, descriptorOf, DirectSocket } from '@dbproxy/runtime';
/** Read once: through the package's CommonJS `export *` every access would be a getter call. */
const BackendCode = BackendCodeExport;

/** Whoever holds the connection receives its frames. */
export interface BackendConsumer {
  onFrame(frame: Frame): void;
  /** When present, frames come here instead, as ranges of the read (`buf[start, end)`, no Frame made). */
  onMessage?(code: number, buf: Buffer, start: number, end: number): void;
  /** After every frame of one read was delivered: the moment to flush to the client. */
  onChunkEnd(): void;
  onLost(err: Error): void;
}

export interface BackendOpenOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly maxMessageSize: number;
  /** Statements prepared on the connection for all its clients, at most (LRU). */
  readonly maxPreparedStatements: number;
}

const NO_SETTINGS: ReadonlyMap<string, string> = new Map();
const TERMINATE = Buffer.from([0x58, 0, 0, 0, 4]); // 'X'
const RESET = encodeFrontendMessages({ type: 'Query', sql: 'ROLLBACK' }, { type: 'Query', sql: 'DISCARD ALL' });

export class PgBackendConnection {
  alive = true;
  /** Session state may have changed (held for a transaction or pin, or a ParameterStatus arrived): reset before reuse. */
  dirty = false;
  /** A CancelRequest was sent for it: never lend it again (a late cancel would hit the next borrower). */
  cancelled = false;
  /** The session statement this connection's unnamed statement currently holds. */
  unnamedHolds: object | undefined;
  /** Named statements prepared here, shared by every client that runs the same text (max_prepared_statements). */
  readonly statements: BackendStatements;
  /** Tracked settings sessions applied here (startup parameters; empty: the connection's own defaults). */
  settings: ReadonlyMap<string, string> = NO_SETTINGS;
  processId = 0;
  secretKey = 0;
  readonly parameters = new Map<string, string>();
  /** Who receives the answers, in the order their requests were written; the first gets the frames. */
  private readonly holders: BackendConsumer[] = [];
  /** For each holder, the ReadyForQuery answers it expects before the one that ends its unit. */
  private readonly extraReadies: number[] = [];
  /** The ReadyForQuery being delivered ends its holder's unit (not one of its extra ones). */
  private finalReady = true;
  private readonly framer: PgFramer;
  private idleStatus = 0x49; // 'I'
  /** The socket's descriptor for direct writes; -1 over TLS. */
  fd = -1;
  /** The socket for SliceWriter.flush: written with write(2) on `fd` while nothing waits in its stream. */
  direct: DirectSocket;
  /** Where the socket's reads go: the startup exchange, then `steady` (frames to the holder). */
  private onBytes: (chunk: Buffer) => void = () => undefined;

  private constructor(
    readonly backend: string,
    readonly address: string,
    private readonly socket: Socket,
    maxMessageSize: number,
    maxPreparedStatements: number,
  ) {
    this.framer = new PgFramer({ phase: 'typed', peer: 'backend', maxMessageSize });
    this.direct = new DirectSocket(socket, -1);
    this.statements = new BackendStatements(maxPreparedStatements);
  }

  static async open(config: BackendConfig, address: string, options: BackendOpenOptions): Promise<PgBackendConnection> {
    // A plain socket is read without the stream layer (ByteReader, @dbproxy/runtime); a TLS one keeps its stream.
    const reader = new ByteReader();
    const socket = await openBackendSocket(config, address, { ...options, onread: reader.onread });
    const conn = new PgBackendConnection(config.name, address, socket, options.maxMessageSize, options.maxPreparedStatements);
    const received = (chunk: Buffer) => conn.onBytes(chunk);
    if (config.tls.enabled) socket.on('data', received);
    else {
      reader.sink = received;
      conn.fd = descriptorOf(socket);
      conn.direct = new DirectSocket(socket, conn.fd);
    }
    try {
      await conn.startup(config, options);
    } catch (err) {
      socket.destroy();
      throw err;
    }
    conn.listen();
    return conn;
  }

  /**
   * Queues `consumer` for the answers to what it sends next (a no-op when it is queued already).
   * Several consumers queue only when units are pipelined (TransactionPools.tryJoin): each then
   * ends with one ReadyForQuery, which hands the connection to the next in line.
   */
  attach(consumer: BackendConsumer): void {
    if (this.holders.includes(consumer)) return;
    this.holders.push(consumer);
    this.extraReadies.push(0);
  }

  /** `consumer` expects nothing more. */
  detach(consumer: BackendConsumer): void {
    const at = this.holders.indexOf(consumer);
    if (at < 0) return;
    if (at === this.holders.length - 1) {
      // the usual case, the only holder: pop, where splice builds the removed elements' array
      this.holders.pop();
      this.extraReadies.pop();
      return;
    }
    this.holders.splice(at, 1);
    this.extraReadies.splice(at, 1);
  }

  /**
   * `consumer` (attached) sent a Query of the proxy's own before its unit (a session's settings):
   * that ReadyForQuery does not end its turn on a connection shared with others.
   */
  expectExtraReady(consumer: BackendConsumer): void {
    const at = this.holders.indexOf(consumer);
    if (at >= 0) this.extraReadies[at]++;
  }

  /** More than one unit is queued on the connection: a unit's failure must not disturb the others. */
  get shared(): boolean {
    return this.holders.length > 1;
  }

  /**
   * While units are pipelined, what they write during one turn of the event loop leaves in one
   * system call after it (the socket is corked until then).
   */
  holdWrites(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    setImmediate(this.releaseWrites);
  }

  private corked = false;
  private readonly releaseWrites = (): void => {
    this.corked = false;
    this.socket.uncork();
  };

  /**
   * `consumer` gives up its answers while others are queued behind it: they are read and dropped
   * up to its ReadyForQuery, then `done` runs. False when it is not queued (nothing to drop).
   */
  abandon(consumer: BackendConsumer, done: () => void): boolean {
    const at = this.holders.indexOf(consumer);
    if (at < 0) return false;
    const discarder: BackendConsumer = {
      onFrame: (frame) => {
        if (frame.code !== BackendCode.ReadyForQuery || !this.finalReady) return;
        this.detach(discarder);
        done();
      },
      onChunkEnd: () => undefined,
      onLost: () => done(),
    };
    this.holders[at] = discarder;
    return true;
  }

  write(data: Buffer): boolean {
    return this.socket.write(data);
  }

  /** The socket itself, for batched writes (SliceWriter) and backpressure. */
  get stream(): Socket {
    return this.socket;
  }

  /** Closes the connection under whoever holds it (offline_hard): each holder is told `err`, as when it is lost. */
  closeUnder(err: Error): void {
    this.lost(err);
  }

  close(reason: string): void {
    if (!this.socket.destroyed) {
      this.socket.end(TERMINATE);
      if (reason !== 'shutdown') this.socket.destroy();
    }
    this.alive = false;
  }

  /** True when the connection may carry session state or an open transaction. */
  needsReset(): boolean {
    return this.dirty || this.idleStatus !== 0x49;
  }

  /** ROLLBACK + DISCARD ALL in one round trip; the connection is closed if that fails or takes over `timeoutMs`. */
  reset(timeoutMs: number): Promise<void> {
    this.unnamedHolds = undefined;
    this.statements.clear(); // DISCARD ALL deallocates them
    this.settings = NO_SETTINGS; // and resets every setting
    return new Promise<void>((resolve, reject) => {
      let ready = 0;
      let failure: string | undefined;
      const timer = setTimeout(() => {
        this.close('reset-timeout');
        reject(new Error(`reset took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      const resetter: BackendConsumer = {
        onFrame: (frame) => {
          if (frame.code === BackendCode.ErrorResponse) {
            const error = decodeBackendMessage(frame);
            failure ??= error.type === 'ErrorResponse' ? `${error.code} ${error.message}` : 'reset failed';
          }
          if (frame.code === BackendCode.ReadyForQuery && ++ready === 2) {
            clearTimeout(timer);
            this.detach(resetter);
            this.idleStatus = frame.payload[0];
            if (failure !== undefined || this.idleStatus !== 0x49) return reject(new Error(failure ?? 'still in a transaction after reset'));
            this.dirty = false;
            resolve();
          }
        },
        onChunkEnd: () => undefined,
        onLost: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.attach(resetter);
      this.socket.write(RESET);
    });
  }

  /**
   * One statement with text parameters, outside any unit (the connection is lent to the caller):
   * the first row's values, or the backend's error. Used to check startup settings.
   */
  firstRow(sql: string, params: readonly string[], timeoutMs: number): Promise<{ readonly row: readonly (string | null)[] } | { readonly error: { readonly code: string; readonly message: string } }> {
    return new Promise((resolve, reject) => {
      let row: (string | null)[] | undefined;
      let error: { code: string; message: string } | undefined;
      const timer = setTimeout(() => {
        this.close('query-timeout');
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const asker: BackendConsumer = {
        onFrame: (frame) => {
          const code = frame.code;
          if (code !== BackendCode.DataRow && code !== BackendCode.ErrorResponse && code !== BackendCode.ReadyForQuery) return;
          const message = decodeBackendMessage(frame);
          if (message.type === 'DataRow') row ??= message.values.map((v) => (v === null ? null : v.toString('utf8')));
          else if (message.type === 'ErrorResponse') error ??= { code: message.code, message: message.message };
          else if (message.type === 'ReadyForQuery') {
            clearTimeout(timer);
            this.detach(asker);
            this.idleStatus = message.status.charCodeAt(0);
            resolve(error ? { error } : { row: row ?? [] });
          }
        },
        onChunkEnd: () => undefined,
        onLost: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.unnamedHolds = undefined;
      this.attach(asker);
      this.socket.write(
        encodeFrontendMessages(
          { type: 'Parse', statement: '', sql, paramTypes: [] },
          { type: 'Bind', portal: '', statement: '', paramFormats: [], params: params.map((p) => Buffer.from(p, 'utf8')), resultFormats: [] },
          { type: 'Execute', portal: '', maxRows: 0 },
          { type: 'Sync' },
        ),
      );
    });
  }

  /** Records the transaction status of the last ReadyForQuery the holder saw. */
  noteStatus(status: number): void {
    this.idleStatus = status;
  }

  /** To the first holder; with others queued, its ReadyForQuery ends its turn (it is dequeued before it sees it). */
  private readonly routeMessage = (code: number, buf: Buffer, start: number, end: number): void => {
    const holders = this.holders;
    const first = holders[0];
    if (first === undefined) return this.whileIdle(typedFrameAt(buf, start, end));
    if (code === BackendCode.ReadyForQuery) {
      this.finalReady = this.extraReadies[0] === 0;
      if (!this.finalReady) this.extraReadies[0]--;
      else if (holders.length > 1) {
        holders.shift();
        this.extraReadies.shift();
      }
    }
    if (first.onMessage !== undefined) first.onMessage(code, buf, start, end);
    else first.onFrame(typedFrameAt(buf, start, end));
  };

  /** After startup: every frame of a read to the holder (or whileIdle), then onChunkEnd. */
  private readonly steady = (chunk: Buffer): void => {
    try {
      this.framer.pushMessages(chunk, this.routeMessage);
    } catch (err) {
      this.lost(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.holders[0]?.onChunkEnd();
  };

  private listen(): void {
    this.socket.on('error', (err) => this.lost(err));
    this.socket.on('close', () => this.lost(PgEdgeErrors.backendLost(this.backend)));
  }

  private lost(err: Error): void {
    if (!this.alive) return;
    this.alive = false;
    this.socket.destroy();
    this.extraReadies.length = 0;
    for (const holder of this.holders.splice(0)) holder.onLost(err);
  }

  /** Frames nobody asked for (the connection sits in the pool): a FATAL ends it; reports are noted. */
  private whileIdle(frame: Frame): void {
    if (frame.code === BackendCode.ParameterStatus) {
      const message = decodeBackendMessage(frame);
      if (message.type === 'ParameterStatus') this.parameters.set(message.name, message.value);
      return;
    }
    if (frame.code === BackendCode.NoticeResponse || frame.code === BackendCode.NotificationResponse) return;
    this.lost(PgEdgeErrors.backendLost(this.backend));
  }

  private startup(config: BackendConfig, options: BackendOpenOptions): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let scram: ScramClientSession | undefined;
      const send = (...messages: FrontendMessage[]) => this.socket.write(encodeFrontendMessages(...messages));
      const timer = setTimeout(() => fail(`no ReadyForQuery within ${options.timeoutMs} ms`), options.timeoutMs);
      const onAbort = () => fail('aborted');
      const done = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.onBytes = this.steady;
        this.socket.off('error', onError).off('close', onClose);
      };
      const fail = (reason: string) => {
        done();
        reject(PgEdgeErrors.backendAuth(config.name, reason));
      };
      const onError = (err: Error) => fail(err.message);
      const onClose = () => fail('the server closed the connection');
      const onMessage = (message: BackendMessage) => {
        switch (message.type) {
          case 'AuthenticationCleartextPassword':
            return send({ type: 'PasswordMessage', password: config.password });
          case 'AuthenticationMD5Password':
            return send({ type: 'PasswordMessage', password: md5PasswordResponse(config.username, config.password, message.salt) });
          case 'AuthenticationSASL': {
            const mechanism = ScramClientSession.chooseMechanism(message.mechanisms);
            scram = new ScramClientSession({ password: config.password });
            return send({ type: 'SASLInitialResponse', mechanism, data: scram.clientFirst() });
          }
          case 'AuthenticationSASLContinue':
            if (!scram) throw PgEdgeErrors.protocol('SASLContinue before SASL');
            return send({ type: 'SASLResponse', data: scram.clientFinal(message.data) });
          case 'AuthenticationSASLFinal':
            if (!scram) throw PgEdgeErrors.protocol('SASLFinal before SASL');
            return scram.verifyServerFinal(message.data);
          case 'ParameterStatus':
            return void this.parameters.set(message.name, message.value);
          case 'BackendKeyData':
            this.processId = message.processId;
            this.secretKey = message.secretKey;
            return;
          case 'ErrorResponse':
            return fail(`${message.code} ${message.message}`);
          case 'ReadyForQuery':
            done();
            return resolve();
          default:
            return;
        }
      };
      const onData = (chunk: Buffer) => {
        try {
          this.framer.push(chunk, (frame) => onMessage(decodeBackendMessage(frame)));
        } catch (err) {
          fail(errorMessage(err));
        }
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.onBytes = onData;
      this.socket.once('error', onError).once('close', onClose);
      send({
        type: 'StartupMessage',
        protocolVersion: 196608,
        parameters: new Map([
          ['user', config.username],
          ['database', config.database],
          ['application_name', 'dbproxy'],
          ['client_encoding', 'UTF8'],
        ]),
      });
    });
  }
}
