// A tiny PostgreSQL client over node:net built only on protocol-pg: startup, auth, simple and extended queries.
import net from 'node:net';
import {
  BackendDecoder,
  encodeFrontendMessages,
  md5PasswordResponse,
  ScramClientSession,
  type BackendMessage,
  type ErrorResponse,
  type FieldDescription,
  type FrontendMessage,
} from '../../src';

export interface ConnectOptions {
  readonly host?: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  readonly password?: string;
  readonly parameters?: Record<string, string>;
}

export interface QueryResult {
  readonly fields: readonly FieldDescription[];
  readonly rows: (Buffer | null)[][];
  readonly tag: string;
}

/** The server's ErrorResponse, surfaced as a rejection. */
export class ServerError extends Error {
  constructor(readonly response: ErrorResponse) {
    super(`${response.severity} ${response.code}: ${response.message}`);
  }
}

export class MiniClient {
  readonly parameters = new Map<string, string>();
  /** Every authentication request the server made, in order. */
  readonly authRequests: string[] = [];
  private readonly decoder = new BackendDecoder();
  private queue: BackendMessage[] = [];
  private waiter: (() => void) | null = null;
  private failure: Error | null = null;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk) => {
      try {
        this.decoder.push(chunk, (message) => this.queue.push(message));
      } catch (err) {
        this.failure = err as Error;
      }
      this.wake();
    });
    socket.on('error', (err) => {
      this.failure = err;
      this.wake();
    });
    socket.on('close', () => {
      this.failure ??= new Error('connection closed');
      this.wake();
    });
  }

  static async connect(options: ConnectOptions): Promise<MiniClient> {
    const socket = net.connect(options.port, options.host ?? '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new MiniClient(socket);
    try {
      await client.startup(options);
    } catch (err) {
      socket.destroy();
      throw err;
    }
    return client;
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  private async next(): Promise<BackendMessage> {
    for (;;) {
      const message = this.queue.shift();
      if (message) return message;
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private send(...messages: FrontendMessage[]): void {
    this.socket.write(encodeFrontendMessages(...messages));
  }

  private async startup(options: ConnectOptions): Promise<void> {
    const parameters = new Map([['user', options.user], ['database', options.database], ...Object.entries(options.parameters ?? {})]);
    this.send({ type: 'StartupMessage', protocolVersion: 196608, parameters });
    let scram: ScramClientSession | null = null;
    for (;;) {
      const message = await this.next();
      if (message.type.startsWith('Authentication')) this.authRequests.push(message.type);
      switch (message.type) {
        case 'AuthenticationCleartextPassword':
          this.send({ type: 'PasswordMessage', password: options.password ?? '' });
          break;
        case 'AuthenticationMD5Password':
          this.send({ type: 'PasswordMessage', password: md5PasswordResponse(options.user, options.password ?? '', message.salt) });
          break;
        case 'AuthenticationSASL':
          scram = new ScramClientSession({ password: options.password ?? '' });
          this.send({ type: 'SASLInitialResponse', mechanism: ScramClientSession.chooseMechanism(message.mechanisms), data: scram.clientFirst() });
          break;
        case 'AuthenticationSASLContinue':
          this.send({ type: 'SASLResponse', data: requireScram(scram).clientFinal(message.data) });
          break;
        case 'AuthenticationSASLFinal':
          requireScram(scram).verifyServerFinal(message.data);
          break;
        case 'ParameterStatus':
          this.parameters.set(message.name, message.value);
          break;
        case 'ErrorResponse':
          throw new ServerError(message);
        case 'ReadyForQuery':
          return;
        default:
          break;
      }
    }
  }

  /** Simple query protocol; resolves with the last statement's result. */
  async simpleQuery(sql: string): Promise<QueryResult> {
    this.send({ type: 'Query', sql });
    return this.collect();
  }

  /** Parse/Bind/Describe/Execute/Sync in one write. */
  async extendedQuery(
    sql: string,
    paramTypes: readonly number[],
    params: readonly (Buffer | null)[],
    paramFormats: readonly number[],
    resultFormats: readonly number[],
  ): Promise<QueryResult> {
    this.send(
      { type: 'Parse', statement: '', sql, paramTypes },
      { type: 'Bind', portal: '', statement: '', paramFormats, params, resultFormats },
      { type: 'Describe', kind: 'P', name: '' },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    return this.collect();
  }

  private async collect(): Promise<QueryResult> {
    let fields: readonly FieldDescription[] = [];
    let rows: (Buffer | null)[][] = [];
    let tag = '';
    let error: ErrorResponse | null = null;
    for (;;) {
      const message = await this.next();
      if (message.type === 'RowDescription') [fields, rows] = [message.fields, []];
      else if (message.type === 'DataRow') rows.push(message.values.map((v) => (v ? Buffer.from(v) : null)));
      else if (message.type === 'CommandComplete') tag = message.tag;
      else if (message.type === 'ErrorResponse') error = message;
      else if (message.type === 'ReadyForQuery') {
        if (error) throw new ServerError(error);
        return { fields, rows, tag };
      }
    }
  }

  async close(): Promise<void> {
    if (this.socket.destroyed) return;
    this.send({ type: 'Terminate' });
    await new Promise<void>((resolve) => this.socket.end(resolve));
  }
}

function requireScram(scram: ScramClientSession | null): ScramClientSession {
  if (!scram) throw new Error('SASL continuation before AuthenticationSASL');
  return scram;
}
