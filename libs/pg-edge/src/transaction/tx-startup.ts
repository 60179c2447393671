// Transaction-mode startup: TLS (required before any credential when proxy.tls.mode = "required"),
// shard key, frontend authentication against [[users]], then the greeting a PostgreSQL server gives.
import type { Socket } from 'node:net';
import type { DeepReadonly, UserConfig } from '@dbproxy/config';
import { encodeBackendMessages, type BackendMessage, type StartupMessage } from '@dbproxy/protocol-pg';
import { errorMessage } from '@dbproxy/util';
import { LOGIN_DEADLINE_MS, type EdgeContext, type EdgeEpoch, type ListenerRole } from '../edge-context';
import { PgEdgeErrors, toErrorResponse } from '../errors';
import { readStartup } from '../frontend-startup';
import { handleCancel, refuse } from '../session-common';
import { ClientInbox } from './client-inbox';
import { StatementSharding } from './sharding/statement-sharding';
import { authenticateClient } from './frontend-auth';
import { TransactionSession } from './tx-session';
import type { TxShared } from './tx-shared';

const ACCEPTED_ENCODINGS = new Set(['utf8', 'utf-8', 'unicode', 'sql_ascii']);
/** Startup parameters transaction mode honours (or that change nothing a shared connection would carry). */
const HARMLESS = new Set(['user', 'database', 'application_name', 'fallback_application_name']);

function unsupportedParameter(message: StartupMessage): Error | undefined {
  for (const [name, value] of message.parameters) {
    const key = name.toLowerCase();
    if (HARMLESS.has(key)) continue;
    if (key === 'client_encoding' && ACCEPTED_ENCODINGS.has(value.toLowerCase())) continue;
    if (key === 'datestyle' && /^\s*iso\b/i.test(value)) continue;
    if (key === 'extra_float_digits' && /^\s*[1-3]\s*$/.test(value)) continue;
    if (key === 'options' && value.trim() === '') continue;
    return PgEdgeErrors.startupParameter(name, value.slice(0, 64));
  }
  return undefined;
}

export async function startTransactionSession(
  client: Socket,
  listener: ListenerRole,
  edge: EdgeContext,
  epoch: EdgeEpoch,
  shared: TxShared,
  track: (session: TransactionSession) => void,
): Promise<void> {
  const outcome = await readStartup(client, { tls: edge.tls, passthroughTls: false, deadlineMs: LOGIN_DEADLINE_MS });
  if (outcome.kind === 'cancel') return handleCancel(edge, 'transaction', outcome.processId, outcome.secretKey, client);
  if (outcome.kind === 'failed') return void (outcome.error ? refuse(outcome.socket, toErrorResponse(outcome.error, 'FATAL')) : outcome.socket.destroy());
  if (outcome.kind !== 'startup') return void outcome.socket.destroy();
  let socket = outcome.socket;
  const reject = (err: Error, reason: string) => {
    edge.metrics.startupRejections.inc({ reason });
    refuse(socket, toErrorResponse(err, 'FATAL'));
  };
  // No credential is challenged before TLS when TLS is required.
  if (edge.tls.mode === 'required' && !outcome.tls) return reject(PgEdgeErrors.tlsRequired(), 'tls_required');
  const resolution = epoch.shardKey.resolve(outcome.message);
  if (!resolution.ok) return reject(resolution.error, 'shard');
  const startup = resolution.message;
  const userName = startup.parameters.get('user') ?? '';
  const inbox = new ClientInbox(socket, outcome.remainder, epoch.config.postgres.max_message_bytes);
  socket = inbox.socket;
  const user = epoch.config.users.find((u) => u.name === userName);
  const timer = setTimeout(() => socket.destroy(), LOGIN_DEADLINE_MS);
  const auth = await authenticateClient(socket, inbox, userName, user, shared.secrets).finally(() => clearTimeout(timer));
  if (!auth.ok) {
    edge.metrics.startupRejections.inc({ reason: 'auth' });
    return void (auth.error ? refuse(socket, auth.error) : socket.destroy());
  }
  const problem = admissionProblem(user as DeepReadonly<UserConfig>, resolution.shard, startup, epoch);
  if (problem) return reject(problem, 'startup_parameters');
  let parameters: ReadonlyMap<string, string>;
  try {
    parameters = await shared.parameters(epoch, resolution.shard);
  } catch (err) {
    edge.logger.warn({ shard: resolution.shard, err: errorMessage(err) }, 'no backend to read server parameters from');
    return reject(err instanceof Error ? err : new Error(String(err)), 'no_backend');
  }
  const session = new TransactionSession(socket, inbox, listener, edge, epoch, shared, resolution.shard, userName);
  track(session);
  socket.write(greeting(parameters, startup, session.key));
  session.start();
}

function admissionProblem(user: DeepReadonly<UserConfig>, shard: string, startup: StartupMessage, epoch: EdgeEpoch): Error | undefined {
  // with statement rules the shards a user reaches are checked per statement (StatementSharding)
  const perStatement = StatementSharding.active(epoch.config.postgres.sharding);
  if (!perStatement && user.shards.length > 0 && !user.shards.includes(shard)) return PgEdgeErrors.shardForbidden(user.name, shard);
  const served = epoch.directory.databaseOf(shard) ?? '';
  const database = startup.parameters.get('database') ?? user.name;
  if (database !== served) return PgEdgeErrors.databaseMismatch(database, shard, served);
  return unsupportedParameter(startup);
}

function greeting(parameters: ReadonlyMap<string, string>, startup: StartupMessage, key: { processId: number; secretKey: number }): Buffer {
  const messages: BackendMessage[] = [{ type: 'AuthenticationOk' }];
  for (const [name, value] of parameters) {
    if (name === 'application_name' || name === 'client_encoding') continue;
    messages.push({ type: 'ParameterStatus', name, value });
  }
  messages.push({ type: 'ParameterStatus', name: 'client_encoding', value: 'UTF8' });
  messages.push({ type: 'ParameterStatus', name: 'application_name', value: startup.parameters.get('application_name') ?? '' });
  messages.push({ type: 'BackendKeyData', processId: key.processId, secretKey: key.secretKey });
  messages.push({ type: 'ReadyForQuery', status: 'I' });
  return encodeBackendMessages(...messages);
}
