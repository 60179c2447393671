// TLS toward a backend from its [tls] table (the same table for MySQL, PostgreSQL and Redis
// backends): chain and hostname always verified, a private CA (alone, or beside the public roots
// with use_webpki_roots), client certificates; files read once per configuration object.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export type BackendTlsSettings = DeepReadonly<DbproxyConfig['redis_backends'][number]['tls']>;

/** Options node:tls and the client libraries (mysql2 ssl, pg ssl, ioredis tls) all take. */
export interface BackendTlsOptions {
  readonly rejectUnauthorized: true;
  readonly ca?: string[];
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
}

const filesRead = new WeakMap<BackendTlsSettings, Omit<BackendTlsOptions, 'servername'>>();

function materials(tls: BackendTlsSettings): Omit<BackendTlsOptions, 'servername'> {
  let read = filesRead.get(tls);
  if (!read) {
    const privateCa = tls.ca_path ? [readFileSync(tls.ca_path, 'utf8')] : [];
    read = {
      rejectUnauthorized: true,
      ...(privateCa.length > 0 ? { ca: tls.use_webpki_roots ? [...rootCertificates, ...privateCa] : privateCa } : {}),
      ...(tls.client_cert_path ? { cert: readFileSync(tls.client_cert_path) } : {}),
      ...(tls.client_key_path ? { key: readFileSync(tls.client_key_path) } : {}),
    };
    filesRead.set(tls, read);
  }
  return read;
}

/**
 * The TLS options for connecting to `host`, or undefined when the backend's TLS is off. The name
 * verified is `server_name`, else the host when it is a name (an IP address is checked against
 * the certificate's IP SANs). Throws when a configured file cannot be read.
 */
export function backendTlsOptions(tls: BackendTlsSettings | undefined, host: string): BackendTlsOptions | undefined {
  if (!tls?.enabled) return undefined;
  const servername = tls.server_name ?? (isIP(host) ? undefined : host);
  return { ...materials(tls), ...(servername ? { servername } : {}) };
}
