// Frontend TLS from [proxy.tls]: the certificate the listeners present when they terminate TLS.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export type FrontendTlsMode = 'disabled' | 'optional' | 'required';

export interface FrontendTls {
  readonly mode: FrontendTlsMode;
  /** Present unless mode is disabled. */
  readonly context: SecureContext | undefined;
}

export function loadFrontendTls(config: DeepReadonly<DbproxyConfig>): FrontendTls {
  const tls = config.proxy.tls;
  if (tls.mode === 'disabled' || !tls.cert_path || !tls.key_path) return { mode: 'disabled', context: undefined };
  const context = createSecureContext({
    cert: readFileSync(tls.cert_path),
    key: readFileSync(tls.key_path),
    ca: tls.ca_path ? readFileSync(tls.ca_path) : undefined,
  });
  return { mode: tls.mode, context };
}

/** Wraps a client socket that was just answered 'S'; resolves once the handshake completed. */
export function acceptTls(socket: Socket, context: SecureContext, timeoutMs: number): Promise<TLSSocket> {
  return new Promise<TLSSocket>((resolve, reject) => {
    const secure = new TLSSocket(socket, { isServer: true, secureContext: context, requestCert: false });
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
