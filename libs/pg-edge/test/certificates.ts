// A private CA with server and client certificates (openssl), and PostgreSQL servers switched to TLS.
import { chownSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { PostgresServer } from '@dbproxy/testing';
import { run } from './processes';

export interface Pki {
  readonly dir: string;
  readonly ca: string;
  readonly server: { readonly cert: string; readonly key: string };
  readonly client: { readonly cert: string; readonly key: string };
}

async function openssl(dir: string, args: string[]): Promise<void> {
  const result = await run('openssl', args, { env: undefined });
  if (result.status !== 0) throw new Error(`openssl ${args[0]} failed in ${dir}: ${result.stderr}`);
}

/** CA, a server certificate for localhost/127.0.0.1, and a client certificate whose CN is `clientName`. */
export async function makePki(dir: string, clientName: string): Promise<Pki> {
  const p = (name: string) => join(dir, name);
  writeFileSync(p('server.ext'), 'subjectAltName = DNS:localhost, IP:127.0.0.1\n');
  await openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=dbproxy test CA', '-keyout', p('ca.key'), '-out', p('ca.pem')]);
  for (const [name, cn, ext] of [['server', 'localhost', true], ['client', clientName, false]] as const) {
    await openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`)]);
    await openssl(dir, ['x509', '-req', '-in', p(`${name}.csr`), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '2', '-out', p(`${name}.pem`), ...(ext ? ['-extfile', p('server.ext')] : [])]);
  }
  return { dir, ca: p('ca.pem'), server: { cert: p('server.pem'), key: p('server.key') }, client: { cert: p('client.pem'), key: p('client.key') } };
}

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
