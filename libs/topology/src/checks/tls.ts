// TLS options of a monitor connection from a backend's [tls] table: chain and hostname verified,
// private CA and client certificates read from files.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { BackendTls } from '../targets';

/** Options every client library takes (node:tls ConnectionOptions, mysql2 SslOptions). */
export interface MonitorTls {
  readonly rejectUnauthorized: true;
  readonly ca?: string[];
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
}

export function tlsOptions(tls: BackendTls | undefined, host: string): MonitorTls | undefined {
  if (!tls) return undefined;
  const privateCa = tls.ca_path ? [readFileSync(tls.ca_path, 'utf8')] : [];
  const servername = tls.server_name ?? (isIP(host) ? undefined : host);
  return {
    rejectUnauthorized: true,
    ...(privateCa.length > 0 ? { ca: tls.use_webpki_roots ? [...rootCertificates, ...privateCa] : privateCa } : {}),
    ...(tls.client_cert_path ? { cert: readFileSync(tls.client_cert_path) } : {}),
    ...(tls.client_key_path ? { key: readFileSync(tls.client_key_path) } : {}),
    ...(servername ? { servername } : {}),
  };
}
