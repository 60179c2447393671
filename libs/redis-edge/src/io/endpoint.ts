// A backend node as command mode connects to it, and the connection state replayed on every
// connection the proxy opens for a session (AUTH, HELLO, SELECT, CLIENT SETNAME, READONLY).
import { encodeCommand, type CommandArg } from '@dbproxy/resp';
import type { BackendTlsSettings } from '@dbproxy/runtime';

export interface NodeEndpoint {
  /** Identity of the connections it gets: address, database, READONLY. */
  readonly key: string;
  /** Backend name (configured name or cluster node id), or the address of a node only a redirect named. */
  readonly name: string;
  readonly shard: string;
  /** `host:port` to dial. */
  readonly address: string;
  readonly role: 'primary' | 'replica';
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** A Redis Cluster replica serving reads: the connection sends READONLY. */
  readonly readOnly: boolean;
  /** The backend's [tls] table (absent: plaintext; cluster nodes are plaintext). */
  readonly tls?: BackendTlsSettings;
}

export function endpointKey(address: string, db: number, readOnly: boolean): string {
  return `${address}/${db}${readOnly ? '/ro' : ''}`;
}

/** Credentials a client gave with AUTH or HELLO ... AUTH. */
export interface ClientAuth {
  readonly username: Buffer | undefined;
  readonly password: Buffer;
}

/** Session state that every backend connection opened for the session must carry. */
export interface ConnectionState {
  readonly protocol: 2 | 3;
  readonly auth: ClientAuth | undefined;
  /** SELECT by the client; undefined: each backend's configured db. */
  readonly db: number | undefined;
  readonly name: Buffer | undefined;
}

export const DEFAULT_STATE: ConnectionState = Object.freeze({ protocol: 2, auth: undefined, db: undefined, name: undefined });

/** True when connections shared by every session can serve this state. */
export function isDefaultState(state: ConnectionState): boolean {
  return state.protocol === 2 && state.auth === undefined && state.db === undefined && state.name === undefined;
}

function authArgs(endpoint: NodeEndpoint, state: ConnectionState): CommandArg[] | undefined {
  if (state.auth) return [state.auth.username ?? 'default', state.auth.password];
  return endpoint.password !== undefined && endpoint.password !== '' ? [endpoint.username ?? 'default', endpoint.password] : undefined;
}

/** The commands that put a new connection to `endpoint` into `state`, in order. */
export function setupFrames(endpoint: NodeEndpoint, state: ConnectionState): Buffer[] {
  const frames: Buffer[] = [];
  const auth = authArgs(endpoint, state);
  if (state.protocol === 3) {
    frames.push(encodeCommand(['HELLO', '3', ...(auth ? ['AUTH', ...auth] : []), ...(state.name ? ['SETNAME', state.name] : [])]));
  } else {
    if (auth) frames.push(encodeCommand(['AUTH', ...auth]));
    if (state.name) frames.push(encodeCommand(['CLIENT', 'SETNAME', state.name]));
  }
  const db = state.db ?? endpoint.db;
  if (db !== 0) frames.push(encodeCommand(['SELECT', db]));
  if (endpoint.readOnly) frames.push(encodeCommand(['READONLY']));
  return frames;
}

/**
 * The setup of a connection carrying SCRIPT KILL / FUNCTION KILL to a server running a script: only
 * AUTH, which is flagged allow-busy (SELECT, CLIENT SETNAME and READONLY are answered -BUSY then;
 * the kill acts on the whole server, so it needs none of them).
 */
export function killSetupFrames(endpoint: NodeEndpoint, state: ConnectionState): Buffer[] {
  const auth = authArgs(endpoint, state);
  return auth ? [encodeCommand(['AUTH', ...auth])] : [];
}
