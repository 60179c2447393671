// Frontend TLS for MySQL clients: the socket upgrade right after an SSLRequest (the certificate
// comes from @dbproxy/runtime's loadFrontendTls).
import type { Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import { carryClientAddress } from '@dbproxy/runtime';

/**
 * Upgrades a client socket right after its SSLRequest. MySQL clients do not wait for an answer
 * before their TLS hello, so `early` may hold its first bytes: the socket is paused (so they are
 * buffered, not emitted) and they go back into it; the TLS socket reads buffered data first.
 */
export function upgradeToTls(socket: Socket, context: SecureContext, early: Buffer | undefined): TLSSocket {
  socket.pause();
  if (early && early.length > 0) socket.unshift(early);
  const secure = new TLSSocket(socket, { isServer: true, secureContext: context, requestCert: false });
  carryClientAddress(socket, secure);
  return secure;
}
