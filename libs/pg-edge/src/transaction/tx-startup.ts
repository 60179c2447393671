// Transaction-mode startup: TLS (required before any credential when proxy.tls.mode = "required"),
// shard key, frontend authentication against [[users]], then the greeting a PostgreSQL server gives.
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';
import type { DeepReadonly, UserConfig } from '@dbproxy/config';
import { encodeBackendMessages, pgError, type BackendMessage, type StartupMessage } from '@dbproxy/protocol-pg';
import { errorMessage, peerAddress, publishOperationalEvent } from '@dbproxy/util';
import { loginDeadlineMs, type EdgeContext, type EdgeEpoch, type ListenerRole } from '../edge-context';
import { logIfInternal, PgEdgeErrors, toErrorResponse } from '../errors';
import { readStartup } from '../frontend-startup';
import { handleCancel, refuse } from '../session-common';
import { countRoute } from '../startup-routes';
import { ClientInbox } from './client-inbox';
import { StatementSharding } from './sharding/statement-sharding';
import { authenticateClient, type AuthOutcome } from './frontend-auth';
import { SettingRefused } from './session-settings';
import { startupSettings, type RequestedSettings } from './startup-parameters';
import { TransactionSession } from './tx-session';
import type { TxShared } from './tx-shared';

export async function startTransactionSession(
  client: Socket,
  listener: ListenerRole,
  edge: EdgeContext,
  epoch: EdgeEpoch,
  shared: TxShared,
  track: (session: TransactionSession) => void,
): Promise<void> {
  const clientAddress = peerAddress(client); // before the handle may move to another socket
  // one deadline from connect to the greeting: startup packet, TLS and authentication
  const loginMs = loginDeadlineMs(epoch.config);
  const loginEnds = performance.now() + loginMs;
  const outcome = await readStartup(client, { tls: edge.tls, passthroughTls: false, deadlineMs: loginMs });
  if (outcome.kind === 'cancel') return handleCancel(edge, 'transaction', outcome.processId, outcome.secretKey, client);
  if (outcome.kind === 'failed') {
    if (PgEdgeErrors.loginTimeout.is(outcome.error)) edge.metrics.clientTimeouts.inc({ mode: 'transaction', kind: 'login' });
    logIfInternal(edge.logger, outcome.error, { mode: 'transaction', while: 'startup' }, 'warn');
    return void (outcome.error ? refuse(outcome.socket, toErrorResponse(outcome.error, 'FATAL')) : outcome.socket.destroy());
  }
  if (outcome.kind !== 'startup') return void outcome.socket.destroy();
  let socket = outcome.socket;
  const loginFailed = (reason: string) =>
    publishOperationalEvent({ event: 'login_failed', protocol: 'postgres', client: clientAddress, user: outcome.message.parameters.get('user') ?? '', listener, reason });
  const reject = (err: Error, reason: string) => {
    edge.metrics.startupRejections.inc({ reason });
    loginFailed(`${reason}: ${err.message}`);
    refuse(socket, toErrorResponse(err, 'FATAL'));
  };
  // No credential is challenged before TLS when TLS is required.
  if (edge.tls.mode === 'required' && !outcome.tls) return reject(PgEdgeErrors.tlsRequired(), 'tls_required');
  const resolution = epoch.shardKey.resolve(outcome.message);
  countRoute(edge.metrics, resolution);
  if (!resolution.ok) return reject(resolution.error, resolution.routeRefused ? 'route' : 'shard');
  const startup = resolution.message;
  const userName = startup.parameters.get('user') ?? '';
  const inbox = new ClientInbox(socket, outcome.remainder, epoch.config.postgres.max_message_bytes);
  socket = inbox.socket;
  const user = epoch.config.users.find((u) => u.name === userName);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    edge.metrics.clientTimeouts.inc({ mode: 'transaction', kind: 'login' });
    refuse(socket, toErrorResponse(PgEdgeErrors.loginTimeout(Math.round(loginMs / 1000)), 'FATAL'));
  }, Math.max(0, loginEnds - performance.now()));
  // a bug's exception is answered here, on the inbox's socket (the caller's may no longer be the client's)
  const auth = await authenticateClient(socket, inbox, userName, user, shared.secrets)
    .catch((err: unknown): AuthOutcome => {
      logIfInternal(edge.logger, err, { mode: 'transaction', while: 'authentication', user: userName });
      return { ok: false, error: toErrorResponse(err, 'FATAL') };
    })
    .finally(() => clearTimeout(timer));
  if (timedOut) return;
  if (!auth.ok) {
    edge.metrics.startupRejections.inc({ reason: 'auth' });
    loginFailed(auth.error === undefined ? 'the client left during authentication' : user === undefined ? 'unknown user' : 'wrong password');
    return void (auth.error ? refuse(socket, auth.error) : socket.destroy());
  }
  const problem = admissionProblem(user as DeepReadonly<UserConfig>, resolution.shard, startup, epoch);
  if (problem) return reject(problem, 'startup_parameters');
  const requested = startupSettings(startup, epoch.config.postgres.ignore_startup_parameters);
  if (!requested.ok) return reject(requested.error, 'startup_parameters');
  let parameters: ReadonlyMap<string, string>;
  let settings: ReadonlyMap<string, string>;
  try {
    parameters = await shared.parameters(epoch, resolution.shard);
    settings = await shared.settings.resolve(epoch, resolution.shard, requested.settings);
  } catch (err) {
    if (err instanceof SettingRefused) {
      edge.metrics.startupRejections.inc({ reason: 'startup_parameters' });
      loginFailed(`startup_parameters: ${err.message}`);
      return refuse(socket, pgError({ severity: 'FATAL', code: err.sqlState, message: err.message }));
    }
    edge.logger.warn({ shard: resolution.shard, err: errorMessage(err) }, 'no backend to read server parameters from');
    return reject(err instanceof Error ? err : new Error(String(err)), 'no_backend');
  }
  const session = new TransactionSession(socket, inbox, listener, edge, epoch, shared, resolution.shard, userName, settings, startup.parameters.get('database') ?? userName, resolution.route?.route ?? null);
  track(session);
  socket.write(greeting(parameters, settings, session.key));
  session.start();
}

function admissionProblem(user: DeepReadonly<UserConfig>, shard: string, startup: StartupMessage, epoch: EdgeEpoch): Error | undefined {
  // with statement rules the shards a user reaches are checked per statement (StatementSharding)
  const perStatement = StatementSharding.active(epoch.config.postgres.sharding);
  if (!perStatement && user.shards.length > 0 && !user.shards.includes(shard)) return PgEdgeErrors.shardForbidden(user.name, shard);
  const served = epoch.directory.databaseOf(shard) ?? '';
  const database = startup.parameters.get('database') ?? user.name;
  if (database !== served) return PgEdgeErrors.databaseMismatch(database, shard, served);
  return undefined;
}

/** The server's ParameterStatus set, with the values the session's own settings give them (as SHOW reports them). */
function greeting(parameters: ReadonlyMap<string, string>, settings: RequestedSettings, key: { processId: number; secretKey: number }): Buffer {
  const messages: BackendMessage[] = [{ type: 'AuthenticationOk' }];
  for (const [name, value] of parameters) {
    if (name === 'application_name' || name === 'client_encoding') continue;
    messages.push({ type: 'ParameterStatus', name, value: settings.get(name) ?? value });
  }
  messages.push({ type: 'ParameterStatus', name: 'client_encoding', value: settings.get('client_encoding') ?? 'UTF8' });
  messages.push({ type: 'ParameterStatus', name: 'application_name', value: settings.get('application_name') ?? '' });
  messages.push({ type: 'BackendKeyData', processId: key.processId, secretKey: key.secretKey });
  messages.push({ type: 'ReadyForQuery', status: 'I' });
  return encodeBackendMessages(...messages);
}
