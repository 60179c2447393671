// Frontend TLS for PostgreSQL clients: the socket upgrade after answering an SSLRequest with 'S'
// (the certificate comes from @dbproxy/runtime's loadFrontendTls).
import type { Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import { carryClientAddress } from '@dbproxy/runtime';

/** Wraps a client socket that was just answered 'S'; resolves once the handshake completed. */
export function acceptTls(socket: Socket, context: SecureContext, timeoutMs: number): Promise<TLSSocket> {
  return new Promise<TLSSocket>((resolve, reject) => {
    const secure = new TLSSocket(socket, { isServer: true, secureContext: context, requestCert: false });
    carryClientAddress(socket, secure);
    const timer = setTimeout(() => fail(new Error('TLS handshake timed out')), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      secure.destroy();
      reject(err);
    };
    secure.once('error', fail);
    secure.once('secure', () => {
      clearTimeout(timer);
      secure.off('error', fail);
      resolve(secure);
    });
  });
}
