// Connections of the coordinator to its participants (shard primaries), opened with mysql2 and the
// [[mysql_backends]] entry's pool account and [tls]; idle ones are kept for the next transaction.
// A connection that saw any error or timeout is destroyed, never reused: its XA state is unknown.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { createConnection, type Connection } from 'mysql2/promise';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export type MysqlBackend = DeepReadonly<DbproxyConfig['mysql_backends'][number]>;

/** Idle connections kept per participant between transactions. */
const MAX_IDLE_PER_BACKEND = 64;

export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) };
}

function sslOptions(backend: MysqlBackend, host: string): Record<string, unknown> | undefined {
  const tls = backend.tls;
  if (!tls.enabled) return undefined;
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

export class ParticipantConnections {
  private readonly idle = new Map<string, { key: string; conn: Connection }[]>();
  private closed = false;

  constructor(private readonly connectTimeoutMs: number) {}

  /** An idle connection to `backend` (same address and account), else a new one. */
  async acquire(backend: MysqlBackend): Promise<Connection> {
    const key = JSON.stringify([backend.address, backend.username, backend.password, backend.tls]);
    const list = this.idle.get(backend.name) ?? [];
    while (list.length > 0) {
      const entry = list.pop() as { key: string; conn: Connection };
      if (entry.key === key) return entry.conn;
      entry.conn.destroy();
    }
    const { host, port } = splitAddress(backend.address);
    const ssl = sslOptions(backend, host);
    const conn = await createConnection({
      host,
      port,
      user: backend.username,
      password: backend.password,
      connectTimeout: this.connectTimeoutMs,
      ...(ssl ? { ssl } : {}),
    });
    conn.on('error', () => conn.destroy());
    (conn as unknown as { dbpxKey: string }).dbpxKey = key;
    return conn;
  }

  /** Returns a connection whose XA branch ended cleanly; destroys it when `healthy` is false. */
  release(backend: MysqlBackend, conn: Connection, healthy: boolean): void {
    const list = this.idle.get(backend.name) ?? [];
    if (!healthy || this.closed || list.length >= MAX_IDLE_PER_BACKEND) {
      conn.destroy();
      return;
    }
    list.push({ key: (conn as unknown as { dbpxKey: string }).dbpxKey, conn });
    this.idle.set(backend.name, list);
  }

  close(): void {
    this.closed = true;
    for (const list of this.idle.values()) for (const e of list) e.conn.destroy();
    this.idle.clear();
  }
}
