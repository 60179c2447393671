// Frontend authentication and TLS with the real `mariadb` CLI and mysql2: [[users]] with
// caching_sha2_password (full auth by RSA without TLS, by cleartext over TLS, then fast auth from
// the digest cache) and mysql_native_password, TLS optional and required, wrong passwords.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startMariaDb, tmpDir, type TempDir } from '@dbproxy/testing';
import type { RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);
const run = promisify(execFile);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let certs: TempDir;
let optional: EdgeHarness;
let required: EdgeHarness;

/** Runs the mariadb CLI; resolves with stdout or rejects with its stderr. */
async function cli(port: number, user: string, password: string, sql: string, tls: 'on' | 'off'): Promise<string> {
  const args = ['-h', '127.0.0.1', '-P', String(port), '-u', user, `-p${password}`, '--batch', '--skip-column-names', tls === 'on' ? '--ssl' : '--skip-ssl', '-e', sql];
  const { stdout } = await run('mariadb', args, { timeout: 20_000 });
  return stdout.trim();
}

async function cliError(port: number, user: string, password: string, tls: 'on' | 'off'): Promise<string> {
  try {
    await cli(port, user, password, 'SELECT 1', tls);
  } catch (err) {
    return String((err as { stderr?: string }).stderr);
  }
  throw new Error('the login was expected to fail');
}

beforeAll(async () => {
  certs = await tmpDir('mysql-edge-certs');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(certs.path, 'key.pem'), '-out', join(certs.path, 'cert.pem'), '-subj', '/CN=localhost', '-days', '2']);
  db = await startMariaDb({ replicas: 0 });
  const backends = [{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' as const }];
  const tls = (mode: string) => `[proxy.tls]\nmode = "${mode}"\ncert_path = "${join(certs.path, 'cert.pem')}"\nkey_path = "${join(certs.path, 'key.pem')}"`;
  optional = await startEdge(backends, '', tls('optional'));
  required = await startEdge(backends, '', tls('required'));
});

afterAll(async () => {
  await optional?.stop();
  await required?.stop();
  await db?.destroy();
  await certs?.remove();
});

describe('mariadb CLI', () => {
  it.each([
    ['caching_sha2_password', 'app', 'app-secret'],
    ['mysql_native_password', 'native', 'native-secret'],
  ])('logs in with %s, with and without TLS', async (_plugin, user, password) => {
    expect(await cli(optional.rwPort, user, password, 'SELECT 40 + 2', 'off')).toBe('42');
    expect(await cli(optional.rwPort, user, password, 'status', 'on')).toMatch(/SSL:\s+Cipher in use is \S+/);
    expect(await cli(optional.rwPort, user, password, 'status', 'off')).toMatch(/SSL:\s+Not in use/);
    expect(await cli(required.rwPort, user, password, 'SELECT 7', 'on')).toBe('7');
    // a second login finds the caching_sha2 digest cached (fast auth), still correct
    expect(await cli(optional.rwPort, user, password, 'SELECT 8', 'off')).toBe('8');
  });

  it('refuses wrong passwords and unknown users with ERR 1045', async () => {
    expect(await cliError(optional.rwPort, 'app', 'nope', 'off')).toMatch(/1045.*Access denied for user 'app'/);
    expect(await cliError(optional.rwPort, 'native', 'nope', 'on')).toMatch(/1045/);
    expect(await cliError(optional.rwPort, 'ghost', 'x', 'off')).toMatch(/1045.*'ghost'/);
    expect(await optional.metric('dbproxy_mysql_logins_total', { result: 'denied' })).toBeGreaterThanOrEqual(3);
  });

  it('with TLS required, refuses a client that sends credentials without TLS (ERR 3159)', async () => {
    expect(await cliError(required.rwPort, 'app', 'app-secret', 'off')).toMatch(/3159|insecure transport/);
  });

  it('runs a script of statements like any MariaDB server', async () => {
    const out = await cli(optional.rwPort, 'app', 'app-secret', 'CREATE DATABASE IF NOT EXISTS cli; USE cli; CREATE TABLE t (a INT); INSERT INTO t VALUES (1),(2); SELECT SUM(a) FROM t; DROP DATABASE cli', 'off');
    expect(out).toBe('3');
  });
});

describe('mysql2', () => {
  it('connects over TLS (caching_sha2_password full auth in cleartext over TLS) and queries', async () => {
    const c = await required.connect({ ssl: { ca: readFileSync(join(certs.path, 'cert.pem')), rejectUnauthorized: false } });
    const stream = (c as unknown as { connection: { stream: { encrypted?: boolean; getProtocol?: () => string } } }).connection.stream;
    expect(stream.encrypted).toBe(true);
    expect(stream.getProtocol?.()).toMatch(/TLS/);
    const [[n]] = await c.execute<RowDataPacket[]>('SELECT ? + 1 AS n', [41]);
    expect(n?.['n']).toBe(42);
    await c.end();
  });

  it('cannot log in without TLS when it is required', async () => {
    await expect(required.connect()).rejects.toMatchObject({ errno: 3159 });
  });
});
