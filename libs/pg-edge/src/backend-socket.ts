// Opening a socket to a PostgreSQL backend: TCP with a deadline, then TLS when the backend's
// [postgres_backends.tls] asks for it (SSLRequest, chain and hostname verified, private CA, client
// certificate); and sending a CancelRequest with a backend's real key.
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { isIP, connect as netConnect, type OnReadOpts, type Socket } from 'node:net';
import { connect as tlsConnect, rootCertificates, type ConnectionOptions } from 'node:tls';
import { splitListen } from '@dbproxy/runtime';
import { errorMessage } from '@dbproxy/util';
import type { BackendConfig } from './backend-directory';
import { PgEdgeErrors } from './errors';

const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]); // length 8, code 80877103
const ACCEPT_TLS = 0x53; // 'S'

export interface OpenOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Read a plain-TCP socket into caller-managed buffers (ignored when the backend uses TLS). */
  readonly onread?: OnReadOpts;
}

/** TCP to `address`, resolved when connected; rejects on error, timeout or abort. */
export function connectTcp(address: string, name: string, options: OpenOptions): Promise<Socket> {
  const { host, port } = splitListen(address);
  return new Promise<Socket>((resolve, reject) => {
    const socket = netConnect({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000, ...(options.onread ? { onread: options.onread } : {}) });
    const fail = (reason: string) => {
      cleanup();
      socket.destroy();
      reject(PgEdgeErrors.backendConnect(name, reason));
    };
    const onError = (err: Error) => fail(err.message);
    const onAbort = () => fail('aborted');
    const timer = setTimeout(() => fail(`no connection within ${options.timeoutMs} ms`), options.timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('error', onError);
      options.signal?.removeEventListener('abort', onAbort);
    };
    socket.once('error', onError);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      cleanup();
      resolve(socket);
    });
  });
}

/** Reads exactly one byte (the answer to SSLRequest); more bytes would be injected plaintext. */
function readOneByte(socket: Socket, timeoutMs: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no answer to SSLRequest within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => done(chunk.length === 1 ? chunk[0] : new Error('unexpected bytes after the SSLRequest answer'));
    const onEnd = () => done(new Error('closed during SSLRequest'));
    const done = (result: number | Error) => {
      clearTimeout(timer);
      socket.off('data', onData).off('error', onEnd).off('close', onEnd);
      socket.pause();
      if (typeof result === 'number') resolve(result);
      else reject(result);
    };
    socket.on('data', onData).once('error', onEnd).once('close', onEnd);
  });
}

/** Node TLS options for a backend: chain and hostname verified; `use_webpki_roots` adds the public roots to `ca_path`. */
export function backendTlsOptions(backend: BackendConfig, host: string): ConnectionOptions {
  const tls = backend.tls;
  const ca: string[] = [];
  if (tls.use_webpki_roots) ca.push(...rootCertificates);
  if (tls.ca_path) ca.push(readFileSync(tls.ca_path, 'utf8'));
  const serverName = tls.server_name ?? host;
  return {
    ca,
    cert: tls.client_cert_path ? readFileSync(tls.client_cert_path) : undefined,
    key: tls.client_key_path ? readFileSync(tls.client_key_path) : undefined,
    rejectUnauthorized: true,
    host: serverName,
    // SNI carries host names only; an IP is still checked against the certificate's IP SANs.
    servername: isIP(serverName) ? undefined : serverName,
  };
}

/** Upgrades a fresh backend socket to TLS with SSLRequest; refuses a backend that answers 'N'. */
export async function startBackendTls(socket: Socket, backend: BackendConfig, address: string, timeoutMs: number): Promise<Socket> {
  socket.write(SSL_REQUEST);
  let answer: number;
  try {
    answer = await readOneByte(socket, timeoutMs);
  } catch (err) {
    socket.destroy();
    throw PgEdgeErrors.backendTls(backend.name, errorMessage(err));
  }
  if (answer !== ACCEPT_TLS) {
    socket.destroy();
    throw PgEdgeErrors.backendTls(backend.name, 'the server does not accept TLS connections');
  }
  const { host } = splitListen(address);
  return new Promise<Socket>((resolve, reject) => {
    const secure = tlsConnect({ ...backendTlsOptions(backend, host), socket });
    const timer = setTimeout(() => fail(new Error(`TLS handshake took longer than ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      secure.destroy();
      reject(PgEdgeErrors.backendTls(backend.name, err.message));
    };
    secure.once('error', fail);
    secure.once('secureConnect', () => {
      clearTimeout(timer);
      secure.off('error', fail);
      secure.setNoDelay(true);
      resolve(secure);
    });
  });
}

/** A connected (and, when configured, TLS-protected) socket to the backend. */
export async function openBackendSocket(backend: BackendConfig, address: string, options: OpenOptions): Promise<Socket> {
  if (!backend.tls.enabled) return connectTcp(address, backend.name, options);
  const socket = await connectTcp(address, backend.name, { ...options, onread: undefined });
  return startBackendTls(socket, backend, address, options.timeoutMs);
}

/** Sends a CancelRequest carrying a backend's real key, over a new plain connection (as libpq does). */
export function sendCancelRequest(address: string, processId: number, secretKey: number, timeoutMs = 5000): Promise<void> {
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80877102, 4); // CancelRequest code 1234 << 16 | 5678
  packet.writeUInt32BE(processId >>> 0, 8);
  packet.writeUInt32BE(secretKey >>> 0, 12);
  return connectTcp(address, 'cancel', { timeoutMs }).then(
    (socket) =>
      new Promise<void>((resolve) => {
        socket.on('error', () => resolve());
        socket.on('close', () => resolve());
        socket.end(packet);
        setTimeout(() => socket.destroy(), timeoutMs).unref();
      }),
    () => undefined,
  );
}
