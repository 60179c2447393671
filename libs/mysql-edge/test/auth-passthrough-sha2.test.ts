// Authentication passthrough with caching_sha2_password. MariaDB 10.11 has no caching_sha2_password
// server plugin and no MySQL 8 server can be installed here, so the server side is a second
// mysql-edge (./bin/dbproxy as a child process, proxy mode) whose [[users]] account uses that
// plugin: its real server-side exchange (fast auth from its digest cache, full auth with the RSA
// public-key request) is what the passthrough edge relays. Needs `npm run build` (npm test builds first).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { metricValue, startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startMariaDb, tmpDir, type TempDir } from '@dbproxy/testing';
import type { RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(180_000);
const run = promisify(execFile);

const SHA2 = { user: 'pt_sha2', password: 'pt-sha2-secret' } as const;
/** Logs in only over frontend TLS: its first login is a full authentication with the password in cleartext to the edge. */
const SHA2_TLS = { user: 'pt_sha2_tls', password: 'pt-sha2-tls-secret' } as const;
/** The passthrough edge's pool and monitor account on the caching_sha2 server (not the client's). */
const POOL = { user: 'pt_pool', password: 'pt-pool-secret' } as const;

let db: Awaited<ReturnType<typeof startMariaDb>>;
let dir: TempDir;
let server: DbproxyProcess;
let serverAdmin: number;
let edge: EdgeHarness;

async function serverMetric(labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${serverAdmin}/metrics`)).text();
  return metricValue(text, 'dbproxy_mysql_logins_total', labels);
}

beforeAll(async () => {
  dir = await tmpDir('mysql-edge-passthrough-sha2');
  db = await startMariaDb({ replicas: 0 });
  const [rw, ro] = [await freePort(), await freePort()];
  serverAdmin = await freePort();
  const toml = `
[telemetry]
log_level = "warn"
[proxy.admin]
listen = "127.0.0.1:${serverAdmin}"
[[users]]
name = "${SHA2.user}"
password = "${SHA2.password}"
mysql_auth_plugin = "caching_sha2_password"
[[users]]
name = "${SHA2_TLS.user}"
password = "${SHA2_TLS.password}"
[[users]]
name = "${POOL.user}"
password = "${POOL.password}"
mysql_auth_plugin = "mysql_native_password"
[health]
interval_seconds = 1
timeout_seconds = 1
failures_before_down = 1
successes_before_up = 1
[mysql]
enabled = true
read_write_listen = "127.0.0.1:${rw}"
read_only_listen = "127.0.0.1:${ro}"
[postgres]
enabled = false
[redis]
enabled = false
[[mysql_backends]]
name = "primary"
address = "127.0.0.1:${db.primary.port}"
role = "primary"
`;
  server = startDbproxy(['start', 'mysql-edge', 'topology', '--config', writeConfig(dir.path, 'sha2-server.toml', toml)]);
  await waitForHttp(`http://127.0.0.1:${serverAdmin}/readyz`, 200, 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${server.output()}`);
  });
  const backend = { name: 'sha2', host: '127.0.0.1', port: rw, role: 'primary' as const, extra: `username = "${POOL.user}"\npassword = "${POOL.password}"` };
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir.path, 'key.pem'), '-out', join(dir.path, 'cert.pem'), '-subj', '/CN=localhost', '-days', '2']);
  const tls = `[proxy.tls]\nmode = "optional"\ncert_path = "${join(dir.path, 'cert.pem')}"\nkey_path = "${join(dir.path, 'key.pem')}"`;
  edge = await startEdge([backend], `auth = "passthrough"\nmonitor_username = "${POOL.user}"\nmonitor_password = "${POOL.password}"`, tls);
});

afterAll(async () => {
  await edge?.stop();
  server?.stop();
  await server?.exited;
  await db?.destroy();
  await dir?.remove();
});

it("holds no password of the client's account", () => {
  expect(edge.config).not.toContain(SHA2.user);
  expect(edge.config).not.toContain(SHA2.password);
});

it('relays a first login that needs full authentication (RSA public key request) and a second by fast auth', async () => {
  const full = await serverMetric({ result: 'ok', plugin: 'caching_sha2_password' });
  // first login: the server has no digest cached, asks for full auth (0x04); without TLS mysql2 asks for the key (0x02)
  const c = await edge.connect({ ...SHA2 });
  const [[one]] = await c.query<RowDataPacket[]>('SELECT 40 + 2 AS n');
  expect(one?.['n']).toBe(42);
  await c.end();
  // second login: the server answers the token from its cache (0x03), the edge passes it on with no client reply awaited
  const again = await edge.connect({ ...SHA2 });
  const [[two]] = await again.execute<RowDataPacket[]>('SELECT ? + 1 AS n', [6]);
  expect(two?.['n']).toBe(7);
  await again.end();
  expect(await serverMetric({ result: 'ok', plugin: 'caching_sha2_password' })).toBe(full + 2);
});

it("the mariadb CLI logs in with --skip-ssl (RSA exchange relayed); a wrong password gets the server's 1045", async () => {
  const args = (password: string) => ['-h', '127.0.0.1', '-P', String(edge.rwPort), '-u', SHA2.user, `-p${password}`, '--batch', '--skip-column-names', '--skip-ssl', '-e', 'SELECT 6 * 7'];
  const { stdout } = await run('mariadb', args(SHA2.password), { timeout: 20_000 });
  expect(stdout.trim()).toBe('42');
  const denied = await serverMetric({ result: 'denied' });
  await expect(run('mariadb', args('wrong'), { timeout: 20_000 })).rejects.toMatchObject({ stderr: expect.stringMatching(new RegExp(`ERROR 1045 \\(28000\\).*Access denied for user '${SHA2.user}'`)) });
  await expect(edge.connect({ user: SHA2.user, password: 'wrong' })).rejects.toMatchObject({ errno: 1045 });
  expect(await serverMetric({ result: 'denied' })).toBe(denied + 2);
});

it('over frontend TLS to a server reached without it, sends the cleartext full-auth password RSA-encrypted with the server key', async () => {
  const ok = await serverMetric({ result: 'ok', plugin: 'caching_sha2_password' });
  const ssl = { ca: readFileSync(join(dir.path, 'cert.pem')), rejectUnauthorized: false };
  // first login of this account: the server asks for full auth; mysql2 over TLS sends the password in cleartext
  const c = await edge.connect({ ...SHA2_TLS, ssl });
  const [[one]] = await c.query<RowDataPacket[]>('SELECT 1 + 1 AS n');
  expect(one?.['n']).toBe(2);
  await c.end();
  expect(await serverMetric({ result: 'ok', plugin: 'caching_sha2_password' })).toBe(ok + 1);
  await expect(edge.connect({ user: SHA2_TLS.user, password: 'wrong', ssl })).rejects.toMatchObject({ errno: 1045 });
});
