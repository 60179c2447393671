// The codec's server side against a real mysql2 client: caching_sha2_password (RSA exchange,
// fast path, full auth over TLS), mysql_native_password, auth switch, a text result set and a
// prepared statement answered with a binary result set.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoundedLru } from '@dbproxy/util';
import { createConnection, type Connection, type ConnectionOptions, type FieldPacket, type RowDataPacket } from 'mysql2/promise';
import { CACHING_SHA2_PLUGIN, ColumnType, NATIVE_PASSWORD_PLUGIN, nativePasswordHash, type AccountCredential, type ServerAuthPlugin } from '../src';
import { CodecServer, type CodecServerOptions } from './codec-server';

const rsa = (() => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
})();

const certDir = mkdtempSync(join(tmpdir(), 'dbp-mysql-tls-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem')], { stdio: 'ignore' });
const tls = { key: readFileSync(join(certDir, 'key.pem'), 'utf8'), cert: readFileSync(join(certDir, 'cert.pem'), 'utf8') };

const accounts = new Map<string, AccountCredential>([
  ['app', { plugin: CACHING_SHA2_PLUGIN, password: 'sha2-secret' }],
  ['legacy', { plugin: NATIVE_PASSWORD_PLUGIN, hash: nativePasswordHash('native-secret') }],
]);

const servers: CodecServer[] = [];
const connections: Connection[] = [];

async function start(authPlugin: ServerAuthPlugin, extra: Partial<CodecServerOptions> = {}): Promise<{ server: CodecServer; port: number }> {
  const server = new CodecServer({ authPlugin, accounts, sha2Cache: new BoundedLru<string, Buffer>(100), rsa, tls, ...extra });
  servers.push(server);
  return { server, port: await server.listen() };
}

async function connect(port: number, options: Partial<ConnectionOptions>): Promise<Connection> {
  const conn = await createConnection({ host: '127.0.0.1', port, user: 'app', password: 'sha2-secret', ...options });
  connections.push(conn);
  return conn;
}

afterAll(async () => {
  for (const c of connections) c.destroy();
  for (const s of servers) await s.close();
  rmSync(certDir, { recursive: true, force: true });
});

describe('server side with mysql2: authentication', () => {
  it('caching_sha2_password: RSA key exchange on the first login, fast path on the second', async () => {
    const { server, port } = await start(CACHING_SHA2_PLUGIN);
    const first = await connect(port, { database: 'shop', connectAttributes: { program_name: 'jest' } });
    await first.ping();
    const second = await connect(port, {});
    await second.ping();
    expect(server.sessions.map((s) => s.authSteps)).toEqual([['more-data:4', 'more-data:public-key', 'accept'], ['accept:fast']]);
    const hello = server.sessions[0].handshake;
    expect(hello).toMatchObject({ username: 'app', database: 'shop', authPlugin: CACHING_SHA2_PLUGIN });
    expect(hello?.connectAttributes?.get('program_name')).toBe('jest');
    expect(hello?.connectAttributes?.get('_client_name')).toBe('Node-MySQL-2');
  });

  it('caching_sha2_password: full authentication over TLS takes the cleartext password', async () => {
    const { server, port } = await start(CACHING_SHA2_PLUGIN, { rsa: undefined });
    const conn = await connect(port, { ssl: { rejectUnauthorized: false } });
    await conn.ping();
    expect(server.sessions[0]).toMatchObject({ secure: true, authSteps: ['more-data:4', 'accept'] });
  });

  it('mysql_native_password, verified against the stored double-SHA1 hash', async () => {
    const { server, port } = await start(NATIVE_PASSWORD_PLUGIN);
    const conn = await connect(port, { user: 'legacy', password: 'native-secret' });
    await conn.ping();
    expect(server.sessions[0].authSteps).toEqual(['accept']);
  });

  it('switches plugin when the account is native but the server greeting said caching_sha2', async () => {
    const { server, port } = await start(CACHING_SHA2_PLUGIN);
    const conn = await connect(port, { user: 'legacy', password: 'native-secret' });
    await conn.ping();
    expect(server.sessions[0].authSteps).toEqual([`switch:${NATIVE_PASSWORD_PLUGIN}`, 'accept']);
  });

  it('refuses a wrong password with ER_ACCESS_DENIED_ERROR', async () => {
    const { port } = await start(NATIVE_PASSWORD_PLUGIN);
    await expect(connect(port, { user: 'legacy', password: 'wrong' })).rejects.toMatchObject({ errno: 1045, sqlState: '28000', code: 'ER_ACCESS_DENIED_ERROR' });
    await expect(connect(port, { user: 'nobody', password: 'x' })).rejects.toMatchObject({ errno: 1045 });
  });
});

describe('server side with mysql2: results', () => {
  let conn: Connection;
  let server: CodecServer;

  beforeAll(async () => {
    const started = await start(CACHING_SHA2_PLUGIN);
    server = started.server;
    conn = await connect(started.port, { dateStrings: true, supportBigNumbers: true, bigNumberStrings: true });
  });

  it('answers COM_QUERY with a text result set mysql2 decodes', async () => {
    const [rows, fields] = (await conn.query('SELECT * FROM fruits')) as [RowDataPacket[], FieldPacket[]];
    expect(fields.map((f) => [f.name, f.columnType])).toEqual([
      ['id', ColumnType.LongLong],
      ['name', ColumnType.VarString],
      ['price', ColumnType.NewDecimal],
      ['picked', ColumnType.DateTime],
      ['note', ColumnType.Blob],
      ['ratio', ColumnType.Double],
      ['raw', ColumnType.Blob],
    ]);
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { id: '1', name: 'äpfel', price: '1.50', picked: '2024-09-01 07:30:00', note: 'crisp', ratio: 0.25, raw: Buffer.from([0, 255]) },
      { id: '18446744073709551615', name: 'kiwi', price: '-0.99', picked: '1999-12-31 23:59:59', note: null, ratio: -1e300, raw: Buffer.alloc(0) },
    ]);
  });

  it('passes a server error through as a mysql2 error', async () => {
    await expect(conn.query('SELECT * FROM nowhere')).rejects.toMatchObject({ errno: 1146, sqlState: '42S02' });
  });

  it('decodes what mysql2 binds in COM_STMT_EXECUTE and answers with a binary result set mysql2 decodes', async () => {
    const when = new Date(2024, 1, 29, 13, 14, 15, 123);
    const params = [42, 'zoë', null, Buffer.from([1, 2, 3]), 2.5, true, { k: [1, 2] }, when];
    const [rows] = (await conn.execute('SELECT ?, ?, ?, ?, ?, ?, ?, ?', params)) as [RowDataPacket[], FieldPacket[]];
    const exec = server.sessions[0].executes[0];
    // What the codec decoded from mysql2's packet (mysql2 binds numbers as DOUBLE, booleans as TINY, objects as JSON).
    expect(exec.parameterTypes.map((t) => t.type)).toEqual([
      ColumnType.Double,
      ColumnType.VarString,
      ColumnType.Null,
      ColumnType.Blob,
      ColumnType.Double,
      ColumnType.Tiny,
      ColumnType.Json,
      ColumnType.DateTime,
    ]);
    expect(exec.params).toEqual([42, 'zoë', null, Buffer.from([1, 2, 3]), 2.5, 1, '{"k":[1,2]}', { kind: 'datetime', year: 2024, month: 2, day: 29, hour: 13, minute: 14, second: 15, microsecond: 123000 }]);
    // What mysql2 decoded from the binary row the codec wrote back.
    expect(Object.values(rows[0])).toEqual([42, 'zoë', null, Buffer.from([1, 2, 3]), 2.5, 1, { k: [1, 2] }, '2024-02-29 13:14:15.123000']);
  });

  it('serves the same prepared statement again with the types already bound', async () => {
    const [rows] = (await conn.execute('SELECT ?, ?', [7, 'again'])) as [RowDataPacket[], FieldPacket[]];
    expect(Object.values(rows[0])).toEqual([7, 'again']);
    const [rows2] = (await conn.execute('SELECT ?, ?', [8, 'twice'])) as [RowDataPacket[], FieldPacket[]];
    expect(Object.values(rows2[0])).toEqual([8, 'twice']);
  });
});
