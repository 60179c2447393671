// A minimal PostgreSQL client over protocol-pg, for what node-postgres cannot express: arbitrary
// startup parameters, exact binary parameters and results, and raw CancelRequests.
import { connect, type Socket } from 'node:net';
import {
  BackendDecoder,
  encodeFrontendMessages,
  ScramClientSession,
  type BackendMessage,
  type FrontendMessage,
} from '@dbproxy/protocol-pg';

export class RawClient {
  private readonly decoder = new BackendDecoder();
  private readonly inbox: BackendMessage[] = [];
  private wake: (() => void) | undefined;
  closed = false;
  processId = 0;
  secretKey = 0;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.decoder.push(chunk, (message) => this.inbox.push(message));
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  send(...messages: FrontendMessage[]): void {
    this.socket.write(encodeFrontendMessages(...messages));
  }

  async next(timeoutMs = 10_000): Promise<BackendMessage | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.inbox.length === 0) {
      if (this.closed) return undefined;
      if (Date.now() > deadline) throw new Error('timed out waiting for a backend message');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return this.inbox.shift();
  }

  /** Messages up to and including ReadyForQuery (or until the server closes). */
  async untilReady(): Promise<BackendMessage[]> {
    const out: BackendMessage[] = [];
    for (;;) {
      const message = await this.next();
      if (!message) return out;
      out.push(message);
      if (message.type === 'ReadyForQuery') return out;
    }
  }

  /** Startup with `parameters`; answers SCRAM or cleartext with `password`. Returns what came back up to ReadyForQuery. */
  async startup(parameters: Record<string, string>, password = ''): Promise<BackendMessage[]> {
    this.send({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map(Object.entries(parameters)) });
    const out: BackendMessage[] = [];
    let scram: ScramClientSession | undefined;
    for (;;) {
      const message = await this.next();
      if (!message) return out;
      out.push(message);
      if (message.type === 'AuthenticationSASL') {
        scram = new ScramClientSession({ password });
        this.send({ type: 'SASLInitialResponse', mechanism: 'SCRAM-SHA-256', data: scram.clientFirst() });
      } else if (message.type === 'AuthenticationSASLContinue' && scram) {
        this.send({ type: 'SASLResponse', data: scram.clientFinal(message.data) });
      } else if (message.type === 'AuthenticationCleartextPassword') {
        this.send({ type: 'PasswordMessage', password });
      } else if (message.type === 'BackendKeyData') {
        this.processId = message.processId;
        this.secretKey = message.secretKey;
      } else if (message.type === 'ReadyForQuery' || message.type === 'ErrorResponse') {
        return out;
      }
    }
  }

  async query(sql: string): Promise<BackendMessage[]> {
    this.send({ type: 'Query', sql });
    return this.untilReady();
  }

  close(): void {
    if (!this.closed) this.send({ type: 'Terminate' });
    this.socket.destroy();
  }
}

/** Sends a CancelRequest for `key` to the proxy and waits for it to close the connection. */
export function cancelRequest(port: number, processId: number, secretKey: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(encodeFrontendMessages({ type: 'CancelRequest', processId, secretKey })));
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

export function errorOf(messages: readonly BackendMessage[]): { code: string; message: string; severity: string } | undefined {
  const error = messages.find((m) => m.type === 'ErrorResponse');
  return error && error.type === 'ErrorResponse' ? { code: error.code, message: error.message, severity: error.severity } : undefined;
}

export function rowsOf(messages: readonly BackendMessage[]): (Buffer | null)[][] {
  return messages.flatMap((m) => (m.type === 'DataRow' ? [[...m.values]] : []));
}
