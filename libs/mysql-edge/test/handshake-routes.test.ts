// Handshake routes ([[mysql.routes]]): two MariaDB servers stand for two clusters (shards "a" and
// "b"); the database and user a client names in its handshake response pick the cluster its whole
// session runs on — through mysql2 and the mariadb CLI, with and without TLS. First match wins, a
// user glob matches, route_default serves the rest, and without it the login is refused with 1049.
// The route is in GET /sessions, the metrics, the session's log line and its statements' spans.
import { execFile } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { SpanKind } from '@opentelemetry/api';
import { makeTestPki, startMariaDb, tmpDir, waitFor, type TempDir, type TestPki } from '@dbproxy/testing';
import { Channels } from '@dbproxy/util';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(180_000);
const run = promisify(execFile);

const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();

let a: Awaited<ReturnType<typeof startMariaDb>>;
let b: Awaited<ReturnType<typeof startMariaDb>>;
let certs: TempDir;
let pki: TestPki;
/** Routes without route_default (a login no route matches is refused) until the last test sets it. */
let strict: EdgeHarness;
const events: Record<string, unknown>[] = [];
const onEvent = (e: unknown) => void events.push(e as Record<string, unknown>);

const ROUTES = `[mysql.sharding]
default_shard = "a"
[[mysql.routes]]
name = "orders"
database = "orders_db"
shard = "a"
[[mysql.routes]]
name = "reports"
user = "report_*"
shard = "b"
[[mysql.routes]]
name = "billing"
database = "billing_*"
shard = "b"
[[mysql.routes]]
name = "tenants"
database = "tenant_*"
shard = "b"
auth = "passthrough"
`;
/** An account only cluster b knows: the "tenants" route lets b's primary check its password (the proxy holds none). */
const TENANT = { user: 'tenant_owner', password: 'tenant-owner-pw' };
const USERS = '[[users]]\nname = "report_ro"\npassword = "report-secret"\nmysql_auth_plugin = "mysql_native_password"\n';

async function port(c: Connection): Promise<number> {
  const [rows] = await c.query<RowDataPacket[]>('SELECT @@port AS port');
  return Number(rows[0]?.['port']);
}

async function cli(edgePort: number, args: readonly string[]): Promise<string> {
  const { stdout } = await run('mariadb', ['-h', '127.0.0.1', '-P', String(edgePort), '-u', 'app', '-papp-secret', '--batch', '--skip-column-names', ...args], { timeout: 20_000 });
  return stdout.trim();
}

async function loginError(c: Promise<Connection>): Promise<{ errno: number; sqlState: string; message: string }> {
  return c.then(
    async (conn) => {
      await conn.end();
      throw new Error('the login was expected to fail');
    },
    (err: { errno: number; sqlState: string; message: string }) => err,
  );
}

beforeAll(async () => {
  channel(Channels.operationalEvent).subscribe(onEvent);
  certs = await tmpDir('mysql-routes-pki');
  pki = await makeTestPki(certs.path, 'app');
  [a, b] = await Promise.all([startMariaDb({ replicas: 0 }), startMariaDb({ replicas: 0, serverIdBase: 20 })]);
  for (const [server, db] of [[a, 'orders_db'], [b, 'billing_eu']] as const) {
    const direct = await createConnection({ host: server.primary.host, port: server.primary.port, user: 'root' });
    await direct.query(`CREATE DATABASE ${db}`);
    await direct.query(`CREATE TABLE ${db}.t (id INT PRIMARY KEY, cluster VARCHAR(8))`);
    await direct.query(`INSERT INTO ${db}.t VALUES (1, '${server === a ? 'a' : 'b'}')`);
    if (server === b) {
      await direct.query('CREATE DATABASE misc_db');
      await direct.query('CREATE DATABASE tenant_x');
      await direct.query(`CREATE USER '${TENANT.user}'@'%' IDENTIFIED BY '${TENANT.password}'`);
      await direct.query(`GRANT ALL ON tenant_x.* TO '${TENANT.user}'@'%'`);
    }
    await direct.end();
  }
  const backends = [
    { name: 'a-primary', host: a.primary.host, port: a.primary.port, role: 'primary' as const, shard: 'a' },
    { name: 'b-primary', host: b.primary.host, port: b.primary.port, role: 'primary' as const, shard: 'b' },
  ];
  const tls = `[proxy.tls]\nmode = "optional"\ncert_path = "${pki.server.cert}"\nkey_path = "${pki.server.key}"\n${USERS}`;
  strict = await startEdge(backends, ROUTES, tls);
});

afterAll(async () => {
  channel(Channels.operationalEvent).unsubscribe(onEvent);
  await strict?.stop();
  await a?.destroy();
  await b?.destroy();
  await certs?.remove();
});

it('shows every route at zero before the first login', async () => {
  const text = await strict.metrics();
  expect(text).toMatch(/^dbproxy_mysql_route_sessions_total\{route="\(none\)",outcome="refused"[^}]*\} 0$/m);
  for (const route of ['orders', 'reports', 'billing']) expect(text).toMatch(new RegExp(`^dbproxy_mysql_route_sessions_total\\{route="${route}",outcome="matched"[^}]*\\} 0$`, 'm'));
});

it('runs a session on the cluster its handshake database names (mysql2, with and without TLS)', async () => {
  const orders = await strict.connect({ database: 'orders_db' });
  const billing = await strict.connect({ database: 'billing_eu', ssl: { ca: readFileSync(pki.ca) } });
  expect(await port(orders)).toBe(a.primary.port);
  expect(await port(billing)).toBe(b.primary.port);
  // reads, writes, transactions and prepared statements all stay on the session's cluster
  await billing.query('INSERT INTO t VALUES (2, ?)', ['b-new']);
  await billing.beginTransaction();
  const [inTx] = await billing.execute<RowDataPacket[]>('SELECT cluster FROM t WHERE id = ?', [1]);
  await billing.commit();
  expect(inTx).toEqual([{ cluster: 'b' }]);
  const [own] = await orders.query<RowDataPacket[]>('SELECT cluster FROM t');
  expect(own).toEqual([{ cluster: 'a' }]);
  // the billing client's login was the one over TLS
  expect(await strict.metric('dbproxy_mysql_logins_total', { result: 'ok', tls: 'true' })).toBe(1);
  await orders.end();
  await billing.end();
  expect(await strict.metric('dbproxy_mysql_route_sessions_total', { route: 'billing', outcome: 'matched' })).toBe(1);
});

it('routes the mariadb CLI the same way, over TLS and without', async () => {
  expect(await cli(strict.rwPort, ['--skip-ssl', '-D', 'billing_eu', '-e', 'SELECT @@port, cluster FROM t WHERE id = 1'])).toBe(`${b.primary.port}\tb`);
  expect(await cli(strict.rwPort, ['--ssl', `--ssl-ca=${pki.ca}`, '-D', 'orders_db', '-e', "SELECT @@port, cluster FROM t; SHOW STATUS LIKE 'Ssl_version'"])).toMatch(new RegExp(`^${a.primary.port}\\ta`));
  const tls = await cli(strict.rwPort, ['--ssl', `--ssl-ca=${pki.ca}`, '-D', 'billing_eu', '-e', 'status']);
  expect(tls).toMatch(/SSL:\s+Cipher in use is/);
});

it("a route's auth = \"passthrough\" lets its cluster's primary check the login; other routes keep the proxy's [[users]]", async () => {
  expect(strict.config).not.toContain(TENANT.password);
  const tenant = await createConnection({ host: '127.0.0.1', port: strict.rwPort, ...TENANT, database: 'tenant_x' });
  try {
    expect(await port(tenant)).toBe(b.primary.port);
    const [rows] = await tenant.query<RowDataPacket[]>('SELECT CURRENT_USER() AS u');
    expect(rows[0]?.['u']).toBe(`${TENANT.user}@%`);
  } finally {
    await tenant.end();
  }
  // the server's own refusal of a wrong password on the passthrough route
  const wrong = await loginError(createConnection({ host: '127.0.0.1', port: strict.rwPort, user: TENANT.user, password: 'nope', database: 'tenant_x' }));
  expect(wrong.errno).toBe(1045);
  expect(wrong.message).toContain(TENANT.user);
  // on a proxy-authenticated route the account is unknown to [[users]]
  const proxied = await loginError(createConnection({ host: '127.0.0.1', port: strict.rwPort, ...TENANT, database: 'orders_db' }));
  expect(proxied.errno).toBe(1045);
});

it('takes the first matching route, and matches a user by glob', async () => {
  const report = { user: 'report_ro', password: 'report-secret' };
  const byDatabase = await strict.connect({ ...report, database: 'orders_db' });
  const byUser = await strict.connect(report);
  expect(await port(byDatabase)).toBe(a.primary.port); // "orders" comes before "reports"
  expect(await port(byUser)).toBe(b.primary.port);
  await byDatabase.end();
  await byUser.end();
  expect(await strict.metric('dbproxy_mysql_route_sessions_total', { route: 'reports', outcome: 'matched' })).toBe(1);
});

it('refuses a login no route matches with 1049 (after the password check)', async () => {
  const refused = await loginError(strict.connect({ database: 'misc_db' }));
  expect(refused).toMatchObject({ errno: 1049, sqlState: '42000', message: "Unknown database 'misc_db' (no [[mysql.routes]] entry matches it and no mysql.route_default is set)" });
  expect((await loginError(strict.connect({ database: 'misc_db', password: 'wrong' }))).errno).toBe(1045);
  const none = await loginError(strict.connect());
  expect(none.errno).toBe(1049);
  await expect(cli(strict.rwPort, ['--skip-ssl', '-D', 'misc_db', '-e', 'SELECT 1'])).rejects.toMatchObject({ stderr: expect.stringContaining("ERROR 1049 (42000): Unknown database 'misc_db'") });
  expect(await strict.metric('dbproxy_mysql_route_sessions_total', { route: '(none)', outcome: 'refused' })).toBe(3);
});

it('names the route and shard in GET /sessions, the session log lines and the statement spans', async () => {
  exporter.reset();
  const held = await strict.connect({ database: 'billing_eu' });
  await held.query('SELECT cluster FROM t');
  const sessions = (await (await fetch(`${strict.admin}/sessions`)).json()) as { sessions: Record<string, unknown>[] };
  const mine = sessions.sessions.find((s) => s['database'] === 'billing_eu');
  expect(mine).toMatchObject({ user: 'app', route: 'billing', shard: 'b' });
  const opened = events.filter((e) => e['event'] === 'session_opened' && e['database'] === 'billing_eu').pop();
  expect(opened).toMatchObject({ protocol: 'mysql', route: 'billing', shard: 'b' });
  const span = await waitFor(() => exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.attributes['db.query.text'] === 'SELECT CLUSTER FROM t') ?? false);
  expect(span.attributes).toMatchObject({ 'dbproxy.handshake_route': 'billing', 'dbproxy.shard': 'b', 'dbproxy.backend': 'b-primary' });
  await held.end();
  await waitFor(() => events.some((e) => e['event'] === 'session_closed' && e['route'] === 'billing') || null);
});

it('serves logins no route matches on route_default once a configuration epoch sets it', async () => {
  await applyMysqlSetting(strict, 'route_default', 'b');
  const fallback = await strict.connect({ database: 'misc_db' });
  expect(await port(fallback)).toBe(b.primary.port);
  const [db] = await fallback.query<RowDataPacket[]>('SELECT DATABASE() AS db');
  expect(db).toEqual([{ db: 'misc_db' }]);
  await fallback.end();
  const routed = await strict.connect({ database: 'orders_db' });
  expect(await port(routed)).toBe(a.primary.port);
  await routed.end();
  expect(await strict.metric('dbproxy_mysql_route_sessions_total', { route: '(default)', outcome: 'default' })).toBe(1);
});
