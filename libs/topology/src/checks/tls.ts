// TLS options of a monitor connection from a backend's [tls] table: the same options the edges
// use toward that backend (@dbproxy/runtime backendTlsOptions).
import { backendTlsOptions, type BackendTlsOptions } from '@dbproxy/runtime';
import type { BackendTls } from '../targets';

/** Options every client library takes (node:tls ConnectionOptions, mysql2 SslOptions). */
export type MonitorTls = BackendTlsOptions;

export function tlsOptions(tls: BackendTls | undefined, host: string): MonitorTls | undefined {
  return backendTlsOptions(tls, host);
}
