// A session's side of authentication passthrough: whether its login is relayed to a backend
// ([mysql] auth; a handshake route's own `auth` decides here too once routes exist), to which
// primary, and what the session becomes when the server accepts (logged in, pinned to the
// connection) or refuses (the server's ERR, then the close).
import { Capability, hasFlag, type HandshakeResponse } from '@dbproxy/protocol-mysql';
import { publishOperationalEvent, peerAddress } from '@dbproxy/util';
import type { Socket } from 'node:net';
import type { RouteChoice } from '@dbproxy/routing';
import { clientAddressesOf, type ProxiedAddresses } from '@dbproxy/runtime';
import { backendCapabilities, profileMariaDb } from '../backend/backend-pools';
import type { BackendConnection } from '../backend/backend-connection';
import type { EdgeContext } from '../edge-context';
import type { EdgeEpoch } from '../epoch';
import { MysqlEdgeErrors, type MysqlError } from '../errors';
import type { LoginResult } from '../frontend/client-login';
import { PassthroughLogin, type PassthroughOutcome, type PassthroughSettings } from './passthrough-login';

/** What the client and the edge agreed in the greeting and HandshakeResponse. */
export interface Negotiated {
  readonly capabilities: number;
  readonly profile: number;
  readonly secure: boolean;
}

/** What a passthrough login needs from its session. */
export interface PassthroughSession {
  readonly edge: EdgeContext;
  readonly epoch: EdgeEpoch;
  readonly listener: string;
  readonly socket: Socket;
  readonly closed: boolean;
  send(bytes: Buffer): void;
  sendError(err: MysqlError, seq: number): void;
  loginDone(result: LoginResult): void;
  loginFailed(err: unknown, seq: number, plugin: string, refusal: { readonly user: string; readonly reason: string }): void;
  /** The session's own backend connection, pinned for its life. */
  adoptPassthrough(conn: BackendConnection, shard: string): void;
  close(reason: string, graceful?: boolean): void;
}

/** The relay as the client login sees it: the client's auth packets go to it; the session cancels it if it closes first. */
export interface PassthroughRelay {
  clientPacket(packet: Parameters<PassthroughLogin['clientPacket']>[0]): void;
  cancel(reason: string): void;
}

/** How this login authenticates: its handshake route's `auth`, else [mysql] auth. */
export function usesPassthrough(epoch: EdgeEpoch, route: RouteChoice | null = null): boolean {
  return (route?.auth ?? epoch.config.mysql.auth) === 'passthrough';
}

/**
 * Starts relaying the login of `hello` (sent with sequence id `helloSeq`) to the primary of
 * `shard`; returns null when the session authenticates [[users]] itself.
 */
export function startPassthrough(s: PassthroughSession, hello: HandshakeResponse, helloSeq: number, negotiated: Negotiated, route: RouteChoice | null | undefined): PassthroughRelay | null {
  const idle: PassthroughRelay = { clientPacket: () => undefined, cancel: () => undefined };
  if (route === undefined) {
    // no handshake route matched: the proxy's own login refuses it once the password is checked; a
    // passthrough proxy has no password to check, so it refuses at once (before any backend is contacted)
    if (!usesPassthrough(s.epoch)) return null;
    s.loginFailed(MysqlEdgeErrors.noRoute(hello.database ?? ''), helloSeq + 1, 'unknown', { user: hello.username, reason: `no route matches database '${hello.database ?? ''}'` });
    return idle;
  }
  if (!usesPassthrough(s.epoch, route)) return null;
  const shard = route?.shard ?? s.epoch.defaultShard;
  if (!hasFlag(hello.capabilities, Capability.PluginAuth)) {
    s.loginFailed(MysqlEdgeErrors.passthroughClient(), helloSeq + 1, 'unknown', { user: hello.username, reason: 'client without CLIENT_PLUGIN_AUTH' });
    return idle;
  }
  let settings: PassthroughSettings;
  try {
    settings = passthroughSettings(s.edge, s.epoch, shard, negotiated, clientAddressesOf(s.socket));
  } catch (err) {
    s.loginFailed(err, helloSeq + 1, 'unknown', { user: hello.username, reason: 'no usable primary' });
    return idle;
  }
  const login = new PassthroughLogin(s, hello, helloSeq, settings);
  login.run().then(
    (outcome) => settle(s, hello, negotiated, shard, route, outcome),
    (err: unknown) => {
      s.edge.logger.warn({ backend: settings.target.endpoint.backend, user: hello.username, err }, 'mysql-edge passthrough login could not reach the backend');
      if (!s.closed) s.loginFailed(err, login.nextClientSeq, 'unknown', { user: hello.username, reason: 'backend unreachable during passthrough login' });
    },
  );
  return login;
}

function passthroughSettings(edge: EdgeContext, epoch: EdgeEpoch, shard: string, { profile, secure }: Negotiated, origin: ProxiedAddresses | undefined): PassthroughSettings {
  const primary = epoch.directory.primary(shard);
  if (primary === undefined) throw epoch.directory.unusable(shard, 'primary', false, edge.clock.now);
  // the pool account is not used: the client's own user logs in; a backend with proxy_protocol is told the client's addresses
  const endpoint = { ...edge.pools.endpoint(primary.name, origin), username: '', password: '' };
  const mysql = epoch.config.mysql;
  return {
    target: { shard, endpoint },
    backendCapabilities: backendCapabilities(profile, epoch),
    mariaDbCapabilities: profileMariaDb(profile),
    connectTimeoutMs: mysql.connect_timeout_seconds * 1000,
    clientSecure: secure,
    collations: edge.collations,
    connection: { backend: primary.name, maxResultBytes: mysql.max_result_bytes, maxStatements: Math.min(256, mysql.max_prepared_statements), states: edge.backendStates, logger: edge.logger },
  };
}

function settle(s: PassthroughSession, hello: HandshakeResponse, negotiated: Negotiated, shard: string, route: RouteChoice | null, outcome: PassthroughOutcome): void {
  if (outcome.kind === 'accepted') {
    if (s.closed) return outcome.conn.close('session closed during login');
    s.loginDone({
      user: hello.username,
      database: hello.database === '' ? null : hello.database,
      capabilities: negotiated.capabilities,
      profile: negotiated.profile,
      collation: hello.characterSet,
      plugin: outcome.plugin,
      secure: negotiated.secure,
      route,
    });
    return s.adoptPassthrough(outcome.conn, shard);
  }
  if (s.closed) return;
  // the server's own ERR (1045 Access denied, 1049 Unknown database...), as a direct login gets it
  s.edge.metrics.logins.inc({ result: outcome.err.code === 1045 ? 'denied' : 'failed', plugin: outcome.plugin, tls: String(negotiated.secure) });
  publishOperationalEvent({ event: 'login_failed', protocol: 'mysql', client: peerAddress(s.socket), user: hello.username, listener: s.listener, reason: `backend refused the passthrough login: ${outcome.err.code} ${outcome.err.message}` });
  s.sendError(outcome.err, outcome.seq);
  s.close('login refused by the backend', true);
}
