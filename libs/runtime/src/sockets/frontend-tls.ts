// Frontend TLS from [proxy.tls]: the certificate the protocol listeners present when a client asks
// for TLS (MySQL SSLRequest, PostgreSQL SSLRequest); each edge upgrades its sockets its own way.
import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export type FrontendTlsMode = 'disabled' | 'optional' | 'required';

export interface FrontendTls {
  readonly mode: FrontendTlsMode;
  /** Present unless the mode is disabled. */
  readonly context: SecureContext | undefined;
}

/** Reads the configured certificate, key and CA (files are read once per configuration epoch). */
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
