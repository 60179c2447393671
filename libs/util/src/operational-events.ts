// What operators read at info level: sessions opened and closed, refused logins, backends going
// down or up. Libraries publish these on one diagnostics channel; libs/observability logs them
// (one line per event, rate-limited per kind).
import { channel } from 'node:diagnostics_channel';
import { Channels } from './channels';

/** Why a client session ended, in the words operators filter on. */
export type SessionCloseKind = 'client_quit' | 'error' | 'killed' | 'timeout' | 'shutdown';

export interface SessionOpened {
  readonly event: 'session_opened';
  readonly protocol: string;
  readonly session: string | number;
  readonly client: string;
  readonly user: string | null;
  readonly database?: string | null;
  readonly listener: string;
  readonly tls?: boolean;
  /** The handshake route ([[mysql.routes]] / [[postgres.routes]]) and the shard it chose, when routes are configured. */
  readonly route?: string;
  readonly shard?: string;
}

export interface SessionClosed {
  readonly event: 'session_closed';
  readonly protocol: string;
  readonly session: string | number;
  readonly client: string;
  readonly user: string | null;
  readonly listener: string;
  readonly duration_ms: number;
  readonly route?: string;
  readonly reason: SessionCloseKind;
  /** The edge's own words for the close (e.g. `COM_QUIT`, `client read timeout`). */
  readonly detail: string;
}

export interface LoginFailed {
  readonly event: 'login_failed';
  readonly protocol: string;
  readonly client: string;
  readonly user: string;
  readonly listener: string;
  /** A login no handshake route matched: the database it named. */
  readonly database?: string;
  readonly reason: string;
}

export interface BackendHealthChanged {
  readonly event: 'backend_down' | 'backend_up';
  readonly protocol: string;
  readonly backend: string;
  readonly address: string;
  readonly shard: string;
  readonly role: string;
  /** The failing check's error (backend_down), or the last error before it came back. */
  readonly error: string | null;
}

export type OperationalEvent = SessionOpened | SessionClosed | LoginFailed | BackendHealthChanged;

const operational = channel(Channels.operationalEvent);

/** True when someone logs operational events (build the event only then). */
export function operationalEventsObserved(): boolean {
  return operational.hasSubscribers;
}

export function publishOperationalEvent(event: OperationalEvent): void {
  if (operational.hasSubscribers) operational.publish(event);
}

/** `host:port` of a socket's peer ("unknown" when the socket is already gone). */
export function peerAddress(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string {
  const host = socket.remoteAddress;
  if (host === undefined) return 'unknown';
  return `${host.includes(':') ? `[${host}]` : host}:${socket.remotePort ?? 0}`;
}

/**
 * Sorts an edge's free-text close reason into a kind. The edges' reasons are fixed strings
 * (`COM_QUIT`, `client read timeout`, `killed`, `draining`, ...); anything unrecognised is an error.
 */
export function sessionCloseKind(detail: string): SessionCloseKind {
  const d = detail.toLowerCase();
  if (/\bkill/.test(d) || d.includes('terminated by an administrator') || d.includes('terminating connection due to administrator')) return 'killed';
  if (d.includes('drain') || d.includes('shutdown') || d.includes('shutting down')) return 'shutdown';
  if (d.includes('timeout') || d.includes('timed out') || d.includes('idle for')) return 'timeout';
  if (d === 'com_quit' || d === 'quit' || d === 'terminate' || d.includes('client terminated') || d.includes('client closed') || d.includes('client quit') || d.includes('client disconnected') || d.includes('client ended')) return 'client_quit';
  return 'error';
}
