// Opens a connection to a backend node, plaintext or TLS from the backend's [tls] table (chain and
// hostname verified, private CA, client certificate). Plaintext sockets read into the shared
// scratch slab (`onread`) and may be written through their descriptor; TLS sockets read through
// the stream and are written through it (the descriptor carries ciphertext).
import { connect, type OnReadOpts, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { backendTlsOptions, type BackendTlsSettings } from '@dbproxy/runtime';

/** What a client is told when a backend's TLS files cannot be read (the path and errno stay in the proxy: /readyz and topology's checks name them). */
export const TLS_FILES_UNREADABLE = "its TLS files ([redis_backends.tls]) cannot be read";

export interface DialOptions {
  readonly tls: BackendTlsSettings | undefined;
  readonly allowHalfOpen?: boolean;
  /** The plaintext read path; TLS sockets get `onData` instead. */
  readonly onread: OnReadOpts;
  readonly onData: (chunk: Buffer) => void;
}

export interface Dialed {
  readonly socket: Socket;
  /** The event after which the connection can carry commands. */
  readonly readyEvent: 'connect' | 'secureConnect';
  readonly secure: boolean;
}

/** `host:port` (IPv6 in brackets) → host and port; an empty host is loopback. */
export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? '127.0.0.1' : host, port: Number(address.slice(colon + 1)) };
}

/** Throws when a configured TLS file cannot be read (the caller reports it as a connect failure). */
export function dialBackend(address: string, options: DialOptions): Dialed {
  const { host, port } = splitAddress(address);
  const allowHalfOpen = options.allowHalfOpen ?? false;
  const tls = backendTlsOptions(options.tls, host);
  if (!tls) return { socket: connect({ host, port, noDelay: true, allowHalfOpen, onread: options.onread }), readyEvent: 'connect', secure: false };
  const socket = tlsConnect({ host, port, ...tls });
  socket.allowHalfOpen = allowHalfOpen;
  socket.setNoDelay(true);
  socket.on('data', options.onData);
  return { socket, readyEvent: 'secureConnect', secure: true };
}
