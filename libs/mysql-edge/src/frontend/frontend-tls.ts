// Frontend TLS from [proxy.tls]: the certificate the listeners present after a client's SSLRequest.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export type FrontendTlsMode = 'disabled' | 'optional' | 'required';

export interface FrontendTls {
  readonly mode: FrontendTlsMode;
  /** Present unless the mode is disabled. */
  readonly context: SecureContext | undefined;
}

export function loadFrontendTls(config: DeepReadonly<DbproxyConfig>): FrontendTls {
  const tls = config.proxy.tls;
  if (tls.mode === 'disabled' || !tls.cert_path || !tls.key_path) return { mode: 'disabled', context: undefined };
  const context = createSecureContext({
    cert: readFileSync(tls.cert_path),
    key: readFileSync(tls.key_path),
    ...(tls.ca_path ? { ca: readFileSync(tls.ca_path) } : {}),
  });
  return { mode: tls.mode, context };
}

/**
 * Upgrades a client socket right after its SSLRequest. MySQL clients do not wait for an answer
 * before their TLS hello, so `early` may hold its first bytes: the socket is paused (so they are
 * buffered, not emitted) and they go back into it; the TLS socket reads buffered data first.
 */
export function upgradeToTls(socket: Socket, context: SecureContext, early: Buffer | undefined): TLSSocket {
  socket.pause();
  if (early && early.length > 0) socket.unshift(early);
  return new TLSSocket(socket, { isServer: true, secureContext: context, requestCert: false });
}
