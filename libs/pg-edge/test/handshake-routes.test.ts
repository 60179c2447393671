// Handshake routes ([[postgres.routes]]): two PostgreSQL servers stand for two clusters (shards "a"
// and "b"); the StartupMessage's database and user pick the cluster, in transparent and in
// transaction mode, through node-postgres and psql, with and without TLS. First match wins, a user
// glob matches, no match is a FATAL 3D000 before any backend is contacted, route_default serves the
// rest; the route is in GET /sessions, the metrics and the session's log line.
import { channel } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { Client, type ClientConfig } from 'pg';
import { makeTestPki, startPostgres, tmpDir, type PostgresServer, type ReplicatedServers, type TempDir, type TestPki } from '@dbproxy/testing';
import { processEnvironment } from '@dbproxy/config';
import { Channels } from '@dbproxy/util';
import { startEdge, type BackendSpec, type EdgeHarness } from './harness';
import { run } from './processes';

jest.setTimeout(180_000);

let a: ReplicatedServers<PostgresServer>;
let b: ReplicatedServers<PostgresServer>;
let certs: TempDir;
let pki: TestPki;
const events: Record<string, unknown>[] = [];
const onEvent = (e: unknown) => void events.push(e as Record<string, unknown>);

const ROUTES = `[[postgres.routes]]
name = "orders"
database = "orders_db"
shard = "a"
[[postgres.routes]]
name = "reports"
user = "report_*"
shard = "b"
[[postgres.routes]]
name = "billing"
database = "billing_*"
shard = "b"
`;

async function admin(server: PostgresServer, sql: string, database = 'postgres'): Promise<void> {
  const c = new Client({ host: server.host, port: server.port, user: 'postgres', database });
  await c.connect();
  await c.query(sql);
  await c.end();
}

function backends(): BackendSpec[] {
  return [
    { name: 'a-primary', host: a.primary.host, port: a.primary.port, role: 'primary', shard: 'a', extra: 'database = "orders_db"' },
    { name: 'b-primary', host: b.primary.host, port: b.primary.port, role: 'primary', shard: 'b', extra: 'database = "billing_eu"' },
  ];
}

async function serverPort(edge: EdgeHarness, options: Partial<ClientConfig>): Promise<number> {
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'postgres', ...options });
  await c.connect();
  try {
    return Number((await c.query<{ port: number }>('SELECT inet_server_port() AS port')).rows[0]?.port);
  } finally {
    await c.end();
  }
}

async function startupError(edge: EdgeHarness, options: Partial<ClientConfig>): Promise<{ code: string; severity: string; message: string }> {
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'postgres', ...options });
  return c.connect().then(
    async () => {
      await c.end();
      throw new Error('the startup was expected to fail');
    },
    (err: { code: string; severity: string; message: string }) => err,
  );
}

async function psql(edge: EdgeHarness, conninfo: string, sql: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return run('psql', ['-X', '-At', '-c', sql, `host=127.0.0.1 port=${edge.rwPort} ${conninfo}`], { env: { ...processEnvironment(), PGPASSWORD: 'app-secret', PGCONNECT_TIMEOUT: '10' } });
}

const tls = () => `[proxy.tls]\nmode = "optional"\ncert_path = "${pki.server.cert}"\nkey_path = "${pki.server.key}"`;

beforeAll(async () => {
  channel(Channels.operationalEvent).subscribe(onEvent);
  certs = await tmpDir('pg-routes-pki');
  pki = await makeTestPki(certs.path, 'app');
  [a, b] = await Promise.all([startPostgres({ replicas: 0 }), startPostgres({ replicas: 0 })]);
  for (const [server, db] of [[a, 'orders_db'], [b, 'billing_eu']] as const) {
    await admin(server.primary, `CREATE DATABASE ${db}`);
    await admin(server.primary, 'CREATE ROLE report_ro LOGIN');
    await admin(server.primary, `CREATE TABLE t (cluster text)`, db);
    await admin(server.primary, `INSERT INTO t VALUES ('${server === a ? 'a' : 'b'}')`, db);
  }
  await admin(b.primary, 'CREATE DATABASE misc_db');
});

afterAll(async () => {
  channel(Channels.operationalEvent).unsubscribe(onEvent);
  await a?.destroy();
  await b?.destroy();
  await certs?.remove();
});

describe('transparent mode', () => {
  let edge: EdgeHarness;
  beforeAll(async () => {
    edge = await startEdge(backends(), `routing_mode = "transparent"\n${ROUTES}`, tls());
  });
  afterAll(async () => edge?.stop());

  it('shows every route at zero before the first startup', async () => {
    const text = await edge.metrics();
    expect(text).toMatch(/^dbproxy_pg_route_sessions_total\{route="\(none\)",outcome="refused"[^}]*\} 0$/m);
    expect(text).toMatch(/^dbproxy_pg_route_sessions_total\{route="billing",outcome="matched"[^}]*\} 0$/m);
  });

  it('connects each startup to the cluster its database names (node-postgres, TLS terminated by the edge, psql)', async () => {
    expect(await serverPort(edge, { database: 'orders_db' })).toBe(a.primary.port);
    expect(await serverPort(edge, { database: 'billing_eu', ssl: { ca: readFileSync(pki.ca, 'utf8') } })).toBe(b.primary.port);
    const plain = await psql(edge, 'user=postgres dbname=billing_eu sslmode=disable', 'SELECT inet_server_port(), cluster FROM t');
    expect(plain.stdout.trim()).toBe(`${b.primary.port}|b`);
    const secure = await psql(edge, `user=postgres dbname=orders_db sslmode=verify-full sslrootcert=${pki.ca}`, "SELECT inet_server_port(), cluster FROM t");
    expect(secure.stderr).toBe('');
    expect(secure.stdout.trim()).toBe(`${a.primary.port}|a`);
    expect(await edge.metric('dbproxy_pg_route_sessions_total', { route: 'billing', outcome: 'matched' })).toBe(2);
  });

  it('takes the first matching route and matches a user by glob', async () => {
    expect(await serverPort(edge, { user: 'report_ro', database: 'orders_db' })).toBe(a.primary.port);
    expect(await serverPort(edge, { user: 'report_ro', database: 'postgres' })).toBe(b.primary.port);
  });

  it('refuses a startup no route matches with FATAL 3D000, before any backend', async () => {
    const err = await startupError(edge, { database: 'misc_db' });
    expect(err).toMatchObject({ code: '3D000', severity: 'FATAL', message: 'database "misc_db" does not exist (no [[postgres.routes]] entry matches it and no postgres.route_default is set)' });
    const cli = await psql(edge, 'user=postgres dbname=misc_db sslmode=disable', 'SELECT 1');
    expect(cli.status).not.toBe(0);
    expect(cli.stderr).toContain('database "misc_db" does not exist');
    expect(await edge.metric('dbproxy_pg_route_sessions_total', { route: '(none)', outcome: 'refused' })).toBe(2);
    expect(await edge.metric('dbproxy_pg_startup_rejections_total', { reason: 'route' })).toBe(2);
  });

  it('names the route and shard in GET /sessions and the session log line', async () => {
    const held = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'postgres', database: 'billing_eu' });
    await held.connect();
    await held.query('SELECT 1');
    const listing = (await (await fetch(`${edge.admin}/sessions`)).json()) as { sessions: Record<string, unknown>[] };
    expect(listing.sessions.find((s) => s['database'] === 'billing_eu')).toMatchObject({ route: 'billing', shard: 'b', backend: 'b-primary' });
    expect(events.filter((e) => e['event'] === 'session_opened' && e['route'] === 'billing').pop()).toMatchObject({ protocol: 'postgres', shard: 'b' });
    await held.end();
  });
});

describe('transaction mode', () => {
  let edge: EdgeHarness;
  const USERS = ['app', 'report_ro', 'other'].map((u) => `[[users]]\nname = "${u}"\npassword = "app-secret"\n`).join('');
  // "billing" matches only the user app here, so other's startup on billing_eu falls through to route_default
  const TX_ROUTES = ROUTES.replace('database = "billing_*"\n', 'database = "billing_*"\nuser = "app"\n');
  beforeAll(async () => {
    edge = await startEdge(backends(), `routing_mode = "transaction"\nroute_default = "b"\n${TX_ROUTES}`, `${USERS}${tls()}`);
  });
  afterAll(async () => edge?.stop());

  it('runs each session on the cluster its startup names (node-postgres, psql, with and without TLS)', async () => {
    const app = { user: 'app', password: 'app-secret' };
    expect(await serverPort(edge, { ...app, database: 'orders_db' })).toBe(a.primary.port);
    expect(await serverPort(edge, { ...app, database: 'billing_eu', ssl: { ca: readFileSync(pki.ca, 'utf8') } })).toBe(b.primary.port);
    const secure = await psql(edge, `user=app dbname=billing_eu sslmode=verify-full sslrootcert=${pki.ca}`, 'SELECT inet_server_port(), cluster FROM t');
    expect(secure.stdout.trim()).toBe(`${b.primary.port}|b`);
    const plain = await psql(edge, 'user=app dbname=orders_db sslmode=disable', 'BEGIN; SELECT inet_server_port(), cluster FROM t; COMMIT');
    expect(plain.stdout.trim()).toContain(`${a.primary.port}|a`);
    // first match: "orders" before "reports"; the glob: report_ro on billing_eu
    expect(await serverPort(edge, { user: 'report_ro', password: 'app-secret', database: 'orders_db' })).toBe(a.primary.port);
    expect(await serverPort(edge, { user: 'report_ro', password: 'app-secret', database: 'billing_eu' })).toBe(b.primary.port);
    expect(await edge.metric('dbproxy_pg_route_sessions_total', { route: 'reports', outcome: 'matched' })).toBe(1);
  });

  it('sends a startup no route matches to route_default', async () => {
    expect(await serverPort(edge, { user: 'other', password: 'app-secret', database: 'billing_eu' })).toBe(b.primary.port);
    expect(await edge.metric('dbproxy_pg_route_sessions_total', { route: '(default)', outcome: 'default' })).toBe(1);
    // transaction mode still serves only the shard's own database there
    const err = await startupError(edge, { user: 'other', password: 'app-secret', database: 'misc_db' });
    expect(err).toMatchObject({ code: '3D000', message: 'database "misc_db" is not served here: shard "b" serves database "billing_eu"' });
  });

  it('lists the route and shard in GET /sessions', async () => {
    const held = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'orders_db' });
    await held.connect();
    const listing = (await (await fetch(`${edge.admin}/sessions`)).json()) as { sessions: Record<string, unknown>[] };
    expect(listing.sessions.find((s) => s['database'] === 'orders_db')).toMatchObject({ user: 'app', route: 'orders', shard: 'a' });
    await held.end();
  });
});
