// A tiny PostgreSQL server over node:net built only on protocol-pg: startup, SCRAM/md5 auth, one canned result.
import net from 'node:net';
import { DbproxyError } from '@dbproxy/util';
import {
  createMd5Salt,
  encodeBackendMessages,
  FrontendDecoder,
  passwordAuthenticationFailed,
  pgError,
  ScramServerSession,
  scramSecretFrom,
  sqlStateForError,
  verifyMd5Response,
  type BackendMessage,
  type FrontendMessage,
} from '../../src';

export interface ServerUser {
  readonly method: 'scram-sha-256' | 'md5';
  /** A plaintext password, a SCRAM verifier or an md5 hash, as pg_authid would hold it. */
  readonly secret: string;
}

type Auth =
  | { readonly kind: 'none' }
  | { readonly kind: 'scram'; readonly session: ScramServerSession }
  | { readonly kind: 'md5'; readonly salt: Buffer; readonly secret: string | null };

export class MiniServer {
  /** What happened, for assertions: `SSLRequest refused`, `authenticated alice`, `rejected alice`. */
  readonly events: string[] = [];
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  private constructor(private readonly users: Readonly<Record<string, ServerUser>>) {
    this.server = net.createServer((socket) => this.serve(socket));
  }

  static async start(users: Readonly<Record<string, ServerUser>>): Promise<MiniServer> {
    const server = new MiniServer(users);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const decoder = new FrontendDecoder();
    const session = { user: '', auth: { kind: 'none' } as Auth };
    const send = (...messages: BackendMessage[]) => socket.write(encodeBackendMessages(...messages));
    socket.on('data', (chunk) => {
      try {
        decoder.push(chunk, (message) => this.handle(message, session, decoder, send, socket));
      } catch (err) {
        const code = err instanceof DbproxyError ? err.code : undefined;
        this.events.push(`protocol error ${code}`);
        send(pgError({ severity: 'FATAL', code: sqlStateForError(code), message: String((err as Error).message) }));
        socket.end();
      }
    });
  }

  private handle(
    message: FrontendMessage,
    session: { user: string; auth: Auth },
    decoder: FrontendDecoder,
    send: (...messages: BackendMessage[]) => void,
    socket: net.Socket,
  ): void {
    const fail = () => {
      this.events.push(`rejected ${session.user}`);
      send(passwordAuthenticationFailed(session.user));
      socket.end();
    };
    const accept = (...first: BackendMessage[]) => {
      this.events.push(`authenticated ${session.user}`);
      send(...first, ...readyMessages());
    };
    switch (message.type) {
      case 'SSLRequest':
      case 'GSSENCRequest':
        this.events.push(`${message.type} refused`);
        return send({ type: 'EncryptionResponse', code: 0x4e, accepted: false });
      case 'StartupMessage':
        session.user = message.parameters.get('user') ?? '';
        session.auth = this.challenge(session.user, decoder, send);
        return;
      case 'SASLInitialResponse':
        if (session.auth.kind !== 'scram') return fail();
        send({ type: 'AuthenticationSASLContinue', data: session.auth.session.handleClientFirst(message.mechanism, message.data) });
        return decoder.expectAuthResponse('sasl');
      case 'SASLResponse': {
        if (session.auth.kind !== 'scram') return fail();
        const result = session.auth.session.handleClientFinal(message.data);
        return result.ok ? accept({ type: 'AuthenticationSASLFinal', data: result.serverFinal }) : fail();
      }
      case 'PasswordMessage':
        if (session.auth.kind !== 'md5' || session.auth.secret === null) return fail();
        return verifyMd5Response({ user: session.user, secret: session.auth.secret }, session.auth.salt, message.password) ? accept() : fail();
      case 'Query':
        return send(
          { type: 'RowDescription', fields: [textField('user'), textField('sql')] },
          { type: 'DataRow', values: [Buffer.from(session.user), Buffer.from(message.sql)] },
          { type: 'CommandComplete', tag: 'SELECT 1' },
          { type: 'ReadyForQuery', status: 'I' },
        );
      case 'Terminate':
        socket.end();
        return;
      default:
        send(pgError({ code: '0A000', message: `${message.type} is not supported by this test server` }), { type: 'ReadyForQuery', status: 'I' });
    }
  }

  /** Unknown users get a SCRAM exchange that cannot succeed, so nothing reveals whether they exist. */
  private challenge(user: string, decoder: FrontendDecoder, send: (...m: BackendMessage[]) => void): Auth {
    const known = Object.hasOwn(this.users, user) ? this.users[user] : undefined;
    if (known?.method === 'md5') {
      const salt = createMd5Salt();
      send({ type: 'AuthenticationMD5Password', salt });
      decoder.expectAuthResponse('password');
      return { kind: 'md5', salt, secret: known.secret };
    }
    send({ type: 'AuthenticationSASL', mechanisms: ScramServerSession.mechanisms });
    decoder.expectAuthResponse('sasl-initial');
    return { kind: 'scram', session: new ScramServerSession({ secret: known ? scramSecretFrom(known.secret) : null }) };
  }
}

function textField(name: string) {
  return { name, tableOid: 0, columnAttr: 0, typeOid: 25, typeSize: -1, typeModifier: -1, format: 0 };
}

function readyMessages(): BackendMessage[] {
  const status = (name: string, value: string): BackendMessage => ({ type: 'ParameterStatus', name, value });
  return [
    { type: 'AuthenticationOk' },
    status('server_version', '15.0'),
    status('server_encoding', 'UTF8'),
    status('client_encoding', 'UTF8'),
    status('DateStyle', 'ISO, MDY'),
    status('integer_datetimes', 'on'),
    status('standard_conforming_strings', 'on'),
    status('TimeZone', 'UTC'),
    { type: 'BackendKeyData', processId: 4242, secretKey: 99 },
    { type: 'ReadyForQuery', status: 'I' },
  ];
}
