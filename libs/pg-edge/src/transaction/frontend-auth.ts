// Transaction mode authenticates clients itself, against [[users]]: SCRAM-SHA-256, or md5 where a
// user is configured so; unknown users run a mock SCRAM exchange and fail like a wrong password.
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { DeepReadonly, UserConfig } from '@dbproxy/config';
import {
  createMd5Salt,
  decodeFrontendMessage,
  encodeBackendMessages,
  passwordAuthenticationFailed,
  scramSecretFrom,
  ScramServerSession,
  verifyMd5Response,
  type ErrorResponse,
  type ScramSecret,
} from '@dbproxy/protocol-pg';
import { DbproxyError } from '@dbproxy/util';
import { PgEdgeErrors, toErrorResponse } from '../errors';
import type { ClientInbox } from './client-inbox';

export type AuthOutcome = { readonly ok: true } | { readonly ok: false; readonly error: ErrorResponse | undefined };

const MOCK_KEY = randomBytes(32);

/** SCRAM secrets derived once per user and password (PBKDF2 is deliberately slow). */
export class ScramSecrets {
  private readonly cache = new Map<string, ScramSecret>();

  get(user: DeepReadonly<UserConfig>): ScramSecret {
    const key = `${user.name}\u0000${user.password}`;
    let secret = this.cache.get(key);
    if (!secret) {
      secret = scramSecretFrom(user.password);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(key, secret);
    }
    return secret;
  }
}

export async function authenticateClient(
  socket: Socket,
  inbox: ClientInbox,
  userName: string,
  user: DeepReadonly<UserConfig> | undefined,
  secrets: ScramSecrets,
): Promise<AuthOutcome> {
  try {
    if (user?.postgres_auth_method === 'md5') return await md5Exchange(socket, inbox, user);
    return await scramExchange(socket, inbox, userName, user ? secrets.get(user) : null);
  } catch (err) {
    // a bug's exception is not a protocol violation: the session's starter logs it and answers XX000
    if (!(err instanceof DbproxyError)) throw err;
    return { ok: false, error: toErrorResponse(err.code === PgEdgeErrors.protocol.code ? err : PgEdgeErrors.protocol(err.message), 'FATAL') };
  }
}

async function md5Exchange(socket: Socket, inbox: ClientInbox, user: DeepReadonly<UserConfig>): Promise<AuthOutcome> {
  const salt = createMd5Salt();
  socket.write(encodeBackendMessages({ type: 'AuthenticationMD5Password', salt }));
  const frame = await inbox.next();
  if (!frame) return { ok: false, error: undefined };
  const message = decodeFrontendMessage(frame, 'password');
  if (message.type !== 'PasswordMessage') throw PgEdgeErrors.protocol(`expected a password message, got ${message.type}`);
  if (verifyMd5Response({ user: user.name, secret: user.password }, salt, message.password)) return { ok: true };
  return { ok: false, error: passwordAuthenticationFailed(user.name) };
}

async function scramExchange(socket: Socket, inbox: ClientInbox, userName: string, secret: ScramSecret | null): Promise<AuthOutcome> {
  const server = new ScramServerSession({ secret, mockSalt: { key: MOCK_KEY, user: userName } });
  socket.write(encodeBackendMessages({ type: 'AuthenticationSASL', mechanisms: ScramServerSession.mechanisms }));
  const first = await inbox.next();
  if (!first) return { ok: false, error: undefined };
  const initial = decodeFrontendMessage(first, 'sasl-initial');
  if (initial.type !== 'SASLInitialResponse') throw PgEdgeErrors.protocol(`expected SASLInitialResponse, got ${initial.type}`);
  const serverFirst = server.handleClientFirst(initial.mechanism, initial.data);
  socket.write(encodeBackendMessages({ type: 'AuthenticationSASLContinue', data: serverFirst }));
  const final = await inbox.next();
  if (!final) return { ok: false, error: undefined };
  const response = decodeFrontendMessage(final, 'sasl');
  if (response.type !== 'SASLResponse') throw PgEdgeErrors.protocol(`expected SASLResponse, got ${response.type}`);
  const result = server.handleClientFinal(response.data);
  if (!result.ok) return { ok: false, error: passwordAuthenticationFailed(userName) };
  socket.write(encodeBackendMessages({ type: 'AuthenticationSASLFinal', data: result.serverFinal }));
  return { ok: true };
}
