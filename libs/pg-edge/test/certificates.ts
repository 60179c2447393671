// A private CA with server and client certificates (openssl), and PostgreSQL servers switched to TLS.
import { chownSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { makeTestPki, type PostgresServer, type TestPki } from '@dbproxy/testing';
import { run } from './processes';

/** The shared test PKI (@dbproxy/testing makeTestPki). */
export type Pki = TestPki;
export const makePki = makeTestPki;

/** Turns on TLS (server certificate, client CAs) on a running server, its files owned by the server's user. */
export async function enableServerTls(server: PostgresServer, pki: Pki): Promise<void> {
  const owner = await run('stat', ['-c', '%u:%g', server.dataDir], { env: undefined });
  const [uid, gid] = owner.stdout.trim().split(':').map(Number);
  for (const [from, to] of [[pki.server.cert, 'tls-server.pem'], [pki.server.key, 'tls-server.key'], [pki.ca, 'tls-ca.pem']] as const) {
    const target = join(server.dataDir, to);
    copyFileSync(from, target);
    chownSync(target, uid, gid);
  }
  await run('chmod', ['600', join(server.dataDir, 'tls-server.key')], { env: undefined });
  const admin = new Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query("ALTER SYSTEM SET ssl_cert_file = 'tls-server.pem'");
  await admin.query("ALTER SYSTEM SET ssl_key_file = 'tls-server.key'");
  await admin.query("ALTER SYSTEM SET ssl_ca_file = 'tls-ca.pem'");
  await admin.query('ALTER SYSTEM SET ssl = on');
  await admin.query('SELECT pg_reload_conf()');
  await admin.end();
}
