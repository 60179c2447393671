// Authentication passthrough ([mysql] auth = "passthrough") against a real MariaDB: accounts that
// exist only on the server (no [[users]] entry, no password in the proxy's configuration) log in
// through mysql2 and the mariadb CLI, with and without frontend TLS; the server's own 1045 for a
// wrong password or an unknown user and 1049 for an unknown database; the session runs on a backend
// connection of its own for its life; the read-only listener still refuses writes.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startMariaDb, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { Command, ServerStatus, hasFlag } from '@dbproxy/protocol-mysql';
import { startEdge, type EdgeHarness } from './harness';
import { RawClient } from './raw-client';

jest.setTimeout(120_000);
const run = promisify(execFile);

const NATIVE = { user: 'pt_native', password: 'pt-native-secret' } as const;
/** An account of a plugin the edge knows nothing of (MariaDB's ed25519): the relay does not depend on it. */
const ED25519 = { user: 'pt_ed25519', password: 'pt-ed25519-secret' } as const;
const DB = 'pt_db';

let db: Awaited<ReturnType<typeof startMariaDb>>;
let certs: TempDir;
let edge: EdgeHarness;
/** Root, straight to the server: setup and checks behind the edge's back. */
let root: Connection;

async function cli(port: number, user: string, password: string, sql: string, extra: string[] = ['--skip-ssl']): Promise<string> {
  const args = ['-h', '127.0.0.1', '-P', String(port), '-u', user, `-p${password}`, '--batch', '--skip-column-names', ...extra, '-e', sql];
  const { stdout } = await run('mariadb', args, { timeout: 20_000 });
  return stdout.trim();
}

async function cliError(port: number, user: string, password: string, sql = 'SELECT 1', extra: string[] = ['--skip-ssl']): Promise<string> {
  try {
    await cli(port, user, password, sql, extra);
  } catch (err) {
    return String((err as { stderr?: string }).stderr);
  }
  throw new Error('the command was expected to fail');
}

/** Backend threads of `user` in the server's processlist. */
async function backendThreads(user: string): Promise<number[]> {
  const [rows] = await root.query<RowDataPacket[]>('SELECT id FROM information_schema.processlist WHERE user = ?', [user]);
  return rows.map((r) => Number(r['id']));
}

/** The server's own count of refused logins. */
async function accessDenied(): Promise<number> {
  const [[row]] = await root.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Access_denied_errors'");
  return Number(row?.['Value']);
}

beforeAll(async () => {
  certs = await tmpDir('mysql-edge-passthrough-certs');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(certs.path, 'key.pem'), '-out', join(certs.path, 'cert.pem'), '-subj', '/CN=localhost', '-days', '2']);
  db = await startMariaDb({ replicas: 0 });
  root = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await root.query(`CREATE DATABASE ${DB}`);
  await root.query(`CREATE TABLE ${DB}.t (id INT PRIMARY KEY, v VARCHAR(20))`);
  await root.query(`CREATE USER '${NATIVE.user}'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('${NATIVE.password}')`);
  await root.query(`GRANT ALL ON ${DB}.* TO '${NATIVE.user}'@'%'`);
  await root.query("INSTALL SONAME 'auth_ed25519'");
  await root.query(`CREATE USER '${ED25519.user}'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('${ED25519.password}')`);
  const backends = [{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' as const }];
  const tls = `[proxy.tls]\nmode = "optional"\ncert_path = "${join(certs.path, 'cert.pem')}"\nkey_path = "${join(certs.path, 'key.pem')}"`;
  edge = await startEdge(backends, 'auth = "passthrough"\nmax_packet_bytes = 1048576', tls);
});

afterAll(async () => {
  await edge?.stop();
  await root?.end();
  await db?.destroy();
  await certs?.remove();
});

it("holds no password of the server's accounts", () => {
  expect(edge.config).toContain('auth = "passthrough"');
  expect(edge.config).not.toContain(NATIVE.user);
  expect(edge.config).not.toContain(NATIVE.password);
});

describe('mysql2', () => {
  it('logs in as the server account (the server checks the password) and runs queries on a connection of its own', async () => {
    const c = await edge.connect({ ...NATIVE, database: DB });
    const [[who]] = await c.query<RowDataPacket[]>('SELECT CURRENT_USER() AS u, USER() AS login, DATABASE() AS d, CONNECTION_ID() AS id');
    expect(who).toMatchObject({ u: `${NATIVE.user}@%`, d: DB });
    expect(String(who?.['login'])).toMatch(new RegExp(`^${NATIVE.user}@`));
    await c.query('INSERT INTO t VALUES (1, ?)', ['one']);
    const [[row]] = await c.execute<RowDataPacket[]>('SELECT v, CONNECTION_ID() AS id FROM t WHERE id = ?', [1]);
    expect(row).toMatchObject({ v: 'one', id: who?.['id'] });
    // pinned for its life: exactly one server thread of that user, the one every statement ran on
    expect(await backendThreads(NATIVE.user)).toEqual([Number(who?.['id'])]);
    await c.query('SET @kept = 5');
    const [[kept]] = await c.query<RowDataPacket[]>('SELECT @kept AS k, CONNECTION_ID() AS id');
    expect(kept).toMatchObject({ k: 5, id: who?.['id'] });
    await c.end();
    // the session's end closes its connection: the server thread goes (it is never pooled)
    await waitFor(async () => (await backendThreads(NATIVE.user)).length === 0, { timeoutMs: 5_000 });
    expect(await edge.metric('dbproxy_mysql_logins_total', { result: 'ok', plugin: 'mysql_native_password' })).toBeGreaterThanOrEqual(1);
  });

  it('logs in over frontend TLS (sequence ids shifted by the SSLRequest)', async () => {
    const c = await edge.connect({ ...NATIVE, database: DB, ssl: { ca: readFileSync(join(certs.path, 'cert.pem')), rejectUnauthorized: false } });
    const [[who]] = await c.query<RowDataPacket[]>('SELECT CURRENT_USER() AS u');
    expect(who?.['u']).toBe(`${NATIVE.user}@%`);
    await c.end();
  });

  it("gets the server's 1045 for a wrong password and for an account that does not exist", async () => {
    const denied = await accessDenied();
    await expect(edge.connect({ user: NATIVE.user, password: 'wrong' })).rejects.toMatchObject({ errno: 1045, message: expect.stringMatching(new RegExp(`Access denied for user '${NATIVE.user}'@'[^']+' \\(using password: YES\\)`)) });
    await expect(edge.connect({ user: 'pt_ghost', password: 'x' })).rejects.toMatchObject({ errno: 1045, message: expect.stringContaining("'pt_ghost'") });
    expect(await edge.metric('dbproxy_mysql_logins_total', { result: 'denied' })).toBeGreaterThanOrEqual(2);
    // the server itself refused both
    expect(await accessDenied()).toBe(denied + 2);
  });

  it("gets the server's 1049 for a database that does not exist, and 1044 for one it may not use", async () => {
    await root.query(`GRANT ALL ON pt_missing.* TO '${NATIVE.user}'@'%'`);
    await expect(edge.connect({ ...NATIVE, database: 'pt_missing' })).rejects.toMatchObject({ errno: 1049 });
    await expect(edge.connect({ ...NATIVE, database: 'mysql' })).rejects.toMatchObject({ errno: 1044 });
  });

  it('COM_RESET_CONNECTION resets its own connection on the server; COM_CHANGE_USER is refused', async () => {
    const c = await edge.connect({ ...NATIVE, database: DB });
    await c.query('SET @gone = 1');
    const [[before]] = await c.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
    await c.reset();
    const [[after]] = await c.query<RowDataPacket[]>('SELECT @gone AS g, CONNECTION_ID() AS id, CURRENT_USER() AS u');
    expect(after).toMatchObject({ g: null, id: before?.['id'], u: `${NATIVE.user}@%` });
    await expect(c.changeUser({ user: 'root', password: '' })).rejects.toMatchObject({ errno: 1235 });
    c.destroy();
  });

  it("the edge's own replies carry the server's transaction state (COM_PING inside and after a transaction)", async () => {
    const raw = await RawClient.login(edge.rwPort, NATIVE.user, NATIVE.password, DB);
    const ping = async () => (await raw.command(Buffer.of(Command.Ping))).summary.statusFlags;
    expect(hasFlag(await ping(), ServerStatus.InTrans)).toBe(false);
    await raw.query('BEGIN');
    expect(hasFlag(await ping(), ServerStatus.InTrans)).toBe(true);
    await raw.query('COMMIT');
    expect(hasFlag(await ping(), ServerStatus.InTrans)).toBe(false);
    raw.end();
  });

  it('the edge still applies its limits: a command over max_packet_bytes gets 1153', async () => {
    const c = await edge.connect({ ...NATIVE, database: DB });
    await expect(c.query(`SELECT '${'x'.repeat(1_100_000)}' AS big`)).rejects.toMatchObject({ errno: 1153 });
    c.destroy();
  });

  it('the read-only listener still refuses writes, and reads run as the server account', async () => {
    const c = await edge.connect({ ...NATIVE, database: DB, port: edge.roPort });
    const [[who]] = await c.query<RowDataPacket[]>('SELECT CURRENT_USER() AS u, COUNT(*) AS n FROM t');
    expect(who).toMatchObject({ u: `${NATIVE.user}@%`, n: 1 });
    await expect(c.query('INSERT INTO t VALUES (2, ?)', ['two'])).rejects.toMatchObject({ errno: 1290 });
    await c.end();
    const [rows] = await root.query<RowDataPacket[]>(`SELECT id FROM ${DB}.t WHERE id = 2`);
    expect(rows).toHaveLength(0);
  });
});

describe('mariadb CLI', () => {
  it('logs in with --skip-ssl and over TLS, as the server account', async () => {
    expect(await cli(edge.rwPort, NATIVE.user, NATIVE.password, `SELECT CURRENT_USER(); SELECT v FROM ${DB}.t WHERE id = 1`)).toBe(`${NATIVE.user}@%\none`);
    expect(await cli(edge.rwPort, NATIVE.user, NATIVE.password, 'status', ['--ssl'])).toMatch(/SSL:\s+Cipher in use is \S+/);
  });

  it('logs in as an ed25519 account (the server names the plugin in its AuthSwitchRequest, the edge relays it)', async () => {
    expect(await cli(edge.rwPort, ED25519.user, ED25519.password, 'SELECT CURRENT_USER()')).toBe(`${ED25519.user}@%`);
    expect(await cliError(edge.rwPort, ED25519.user, 'wrong')).toMatch(/ERROR 1045 \(28000\)/);
  });

  it("gets the server's 1045 for a wrong password or an unknown user, 1290 on the read-only listener", async () => {
    expect(await cliError(edge.rwPort, NATIVE.user, 'wrong')).toMatch(new RegExp(`ERROR 1045 \\(28000\\).*Access denied for user '${NATIVE.user}'`));
    expect(await cliError(edge.rwPort, 'pt_ghost', 'x')).toMatch(/ERROR 1045 \(28000\).*'pt_ghost'/);
    expect(await cliError(edge.roPort, NATIVE.user, NATIVE.password, `DELETE FROM ${DB}.t`)).toMatch(/ERROR 1290/);
  });
});
