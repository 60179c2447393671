// Operations end to end (issue 21): ./bin/dbproxy running config-api, topology and the three edges
// (mysql-edge with two worker processes) on a real nats-server, real MariaDB, PostgreSQL and Redis,
// driven through mysql2, pg and ioredis: sessions and pools as GET /v1/sessions and /v1/pools show
// them, kills the clients read in their own protocol, pause/resume with held statements.
// Needs `npm run build` (bin/dbproxy runs dist/).
import Redis from 'ioredis';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { Client } from 'pg';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startMariaDb, startNats, startPostgres, startRedis, tmpDir, waitFor, type NatsServer, type TempDir } from '@dbproxy/testing';

jest.setTimeout(180_000);

const TOKEN = 'ops-token-0123456789abcdef';
const VIEWER = 'viewer-token-0123456789abcdef';
const EDGE = 'ops-edge-1';
const REASON = 'maintenance window 42';

interface SessionJson {
  id: string;
  edge: string;
  protocol: string;
  client_address: string;
  user: string;
  database: string;
  listener: string;
  state: string;
  statement: string | null;
  backend: string | null;
  pinned_reason: string | null;
  epoch: number;
  age_seconds: number;
  bytes_in: number;
  bytes_out: number;
}
interface EdgeJson {
  edge: string;
  protocol: string;
  status: string;
  statements_total: number;
  paused: boolean;
}

let nats: NatsServer;
let dir: TempDir;
let proxy: DbproxyProcess;
let api: string;
let ports: { mysql: number; pg: number; redis: number };
let destroyServers: () => Promise<unknown>;

async function call(method: string, path: string, body?: unknown, token = TOKEN): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${api}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function sessions(): Promise<{ edges: EdgeJson[]; sessions: SessionJson[] }> {
  const { status, json } = await call('GET', '/v1/sessions');
  expect(status).toBe(200);
  return json as unknown as { edges: EdgeJson[]; sessions: SessionJson[] };
}

/** Waits until GET /v1/sessions shows a session of `protocol` that `match` accepts. */
async function sessionWhere(protocol: string, match: (s: SessionJson) => boolean): Promise<SessionJson> {
  let last: unknown;
  return waitFor(
    async () => {
      const shown = await sessions();
      last = shown;
      return shown.sessions.find((s) => s.protocol === protocol && match(s)) ?? null;
    },
    { timeoutMs: 15_000 },
  ).catch((err: unknown) => {
    throw new Error(`no ${protocol} session matched: ${JSON.stringify(last)} (${String(err)}: ${String((err as { cause?: unknown }).cause)})`);
  });
}

const mysql = () => createConnection({ host: '127.0.0.1', port: ports.mysql, user: 'app', password: 'ops-secret', database: 'app' });
async function pg(): Promise<Client> {
  const c = new Client({ host: '127.0.0.1', port: ports.pg, user: 'app', password: 'ops-secret', database: 'postgres' });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}
const redis = () => new Redis({ host: '127.0.0.1', port: ports.redis, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: false });

/** Settles within `ms`? (a held statement must not). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}

beforeAll(async () => {
  const [natsServer, tmp, maria, postgres, redisServer] = await Promise.all([startNats(), tmpDir('operations'), startMariaDb({ replicas: 0 }), startPostgres({ replicas: 0 }), startRedis({ replicas: 0 })]);
  [nats, dir] = [natsServer, tmp];
  destroyServers = () => Promise.allSettled([maria.destroy(), postgres.destroy(), redisServer.destroy(), natsServer.destroy()]);
  const root = await createConnection({ host: maria.primary.host, port: maria.primary.port, user: 'root' });
  await root.query('CREATE DATABASE app');
  await root.end();
  const [apiPort, admin, myRo, pgRo, redisRo] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  ports = { mysql: await freePort(), pg: await freePort(), redis: await freePort() };
  api = `http://127.0.0.1:${apiPort}`;
  const toml = `
[proxy]
instance_name = "${EDGE}"
[proxy.admin]
listen = "127.0.0.1:${admin}"
[bus]
nats_url = "${nats.url}"
heartbeat_interval_seconds = 1
[telemetry]
log_level = "warn"
[health]
interval_seconds = 0.5
[[users]]
name = "app"
password = "ops-secret"
[mysql]
enabled = true
workers = 2
read_write_listen = "127.0.0.1:${ports.mysql}"
read_only_listen = "127.0.0.1:${myRo}"
[[mysql_backends]]
name = "maria"
address = "127.0.0.1:${maria.primary.port}"
role = "primary"
[postgres]
enabled = true
routing_mode = "transaction"
read_write_listen = "127.0.0.1:${ports.pg}"
read_only_listen = "127.0.0.1:${pgRo}"
[[postgres_backends]]
name = "pgprimary"
address = "127.0.0.1:${postgres.primary.port}"
role = "primary"
[redis]
enabled = true
mode = "command"
read_write_listen = "127.0.0.1:${ports.redis}"
read_only_listen = "127.0.0.1:${redisRo}"
[[redis_backends]]
name = "r1"
address = "127.0.0.1:${redisServer.primary.port}"
role = "primary"
[config_api]
listen = "127.0.0.1:${apiPort}"
edge_request_timeout_seconds = 3
[[config_api.tokens]]
name = "ops"
token = "${TOKEN}"
[[config_api.tokens]]
name = "viewer"
token = "${VIEWER}"
role = "read_only"
`;
  const path = writeConfig(dir.path, 'dbproxy.toml', toml);
  proxy = startDbproxy(['start', 'config-api', 'topology', 'mysql-edge', 'pg-edge', 'redis-edge', '--config', path]);
  await waitForHttp(`http://127.0.0.1:${admin}/readyz`, 200, 90_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${proxy.output()}`);
  });
  await waitFor(async () => ((await call('GET', '/v1/sessions')).json['edges'] as EdgeJson[]).filter((e) => e.status === 'ok').length === 3 || null, { timeoutMs: 20_000 });
});

afterAll(async () => {
  await proxy?.stop('SIGKILL');
  await destroyServers?.();
  await dir?.remove();
});

it('shows running sessions of every protocol and their pools, and kills each with the reason in its protocol', async () => {
  const my = await mysql();
  my.on('error', () => undefined);
  const pgClient = await pg();
  const rd = redis();
  await rd.ping();
  const mySleep = my.query('SELECT SLEEP(5)');
  const pgSleep = pgClient.query('SELECT pg_sleep(5)');
  const blocked = rd.blpop('ops:nothing', 5);
  try {
    const m = await sessionWhere('mysql', (s) => s.state === 'running');
    expect(m).toMatchObject({ edge: EDGE, user: 'app', database: 'app', listener: 'read_write', backend: 'maria', epoch: expect.any(Number) });
    expect(m.statement).toMatch(/SLEEP/i);
    expect(m.statement).not.toContain('5');
    expect(m.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(m.bytes_in).toBeGreaterThan(0);
    expect(m.bytes_out).toBeGreaterThan(0);
    const p = await sessionWhere('postgres', (s) => s.state === 'running');
    expect(p).toMatchObject({ edge: EDGE, user: 'app', database: 'postgres', listener: 'read_write', backend: 'pgprimary' });
    expect(p.statement).toMatch(/pg_sleep/i);
    expect(p.statement).not.toContain('5');
    const r = await sessionWhere('redis', (s) => s.state === 'blocked');
    expect(r.statement?.toLowerCase()).toBe('blpop');

    const pools = (await call('GET', '/v1/pools', undefined, VIEWER)).json as { edges: EdgeJson[]; pools: Record<string, unknown>[] };
    expect(pools.edges.map((e) => e.status)).toEqual(['ok', 'ok', 'ok']);
    expect(pools.pools.find((x) => x['backend'] === 'maria')).toMatchObject({ edge: EDGE, protocol: 'mysql', in_use: 1, waiters: 0, checkouts: expect.any(Number), wait_ms: { p50: expect.any(Number), p95: expect.any(Number), p99: expect.any(Number) } });
    expect(pools.pools.find((x) => x['backend'] === 'pgprimary')).toMatchObject({ protocol: 'postgres', in_use: 1 });
    expect((await call('GET', '/v1/pools?backend=maria')).json['pools']).toHaveLength(1);
    expect((await call('GET', '/v1/sessions?protocol=postgres&user=app')).json['sessions']).toEqual([expect.objectContaining({ id: p.id })]);

    // a read-only token may look, not kill
    expect((await call('DELETE', `/v1/sessions/${m.id}`, { reason: REASON }, VIEWER)).status).toBe(403);
    for (const s of [m, p, r]) expect(await call('DELETE', `/v1/sessions/${s.id}`, { reason: REASON })).toEqual({ status: 200, json: { killed: s.id, edge: EDGE } });
    await expect(mySleep).rejects.toMatchObject({ errno: 1927, sqlState: '70100', message: expect.stringContaining(REASON) });
    await expect(pgSleep).rejects.toMatchObject({ code: '57P01', severity: 'FATAL', message: expect.stringContaining(REASON) });
    await expect(blocked).rejects.toThrow(`ERR connection closed by an administrator: ${REASON}`);
    await waitFor(async () => (await sessions()).sessions.every((s) => ![m.id, p.id, r.id].includes(s.id)) || null, { timeoutMs: 10_000 });

    expect(await call('DELETE', `/v1/sessions/${m.id}`, {})).toMatchObject({ status: 404, json: { error: 'not_found' } });
    const actions = (await call('GET', '/v1/actions', undefined, VIEWER)).json['actions'] as Record<string, unknown>[];
    expect(actions.filter((a) => a['action'] === 'kill')).toEqual([
      ...[m, p, r].map((s) => ({ at: expect.any(String), token: 'ops', action: 'kill', target: s.id, outcome: 'ok' })),
      { at: expect.any(String), token: 'ops', action: 'kill', target: m.id, outcome: 'not_found' },
    ]);
  } finally {
    my.destroy();
    await pgClient.end().catch(() => undefined);
    rd.disconnect();
  }
});

describe('pause and resume', () => {
  let my: Connection;
  let myTx: Connection;
  let pgClient: Client;
  let pgTx: Client;
  let rd: Redis;

  beforeEach(async () => {
    [my, myTx, pgClient, pgTx] = await Promise.all([mysql(), mysql(), pg(), pg()]);
    rd = redis();
    await rd.ping();
  });
  afterEach(async () => {
    await call('POST', `/v1/edges/${EDGE}/resume`);
    my.destroy();
    myTx.destroy();
    await Promise.allSettled([pgClient.end(), pgTx.end()]);
    rd.disconnect();
  });

  it('holds new statements until resume, while open transactions finish', async () => {
    await myTx.query('START TRANSACTION');
    await myTx.query('SELECT 1');
    await pgTx.query('BEGIN');
    const before = (await sessions()).edges;
    expect(await call('POST', `/v1/edges/${EDGE}/pause`, { timeout_seconds: 60 })).toEqual({ status: 200, json: { edge: EDGE, paused: true } });
    const myHeld = my.query<RowDataPacket[]>('SELECT 7 AS v');
    const pgHeld = pgClient.query('SELECT 8 AS v');
    const rdHeld = rd.echo('nine');
    expect(await settlesWithin(Promise.race([myHeld, pgHeld, rdHeld]), 1_000)).toBe(false);
    const shown = await sessions();
    expect(shown.edges.every((e) => e.paused)).toBe(true);
    expect(shown.sessions.filter((s) => s.state === 'held').map((s) => s.protocol).sort()).toEqual(['mysql', 'postgres', 'redis']);
    // the transactions open at the pause run to their end
    const [[row]] = await myTx.query<RowDataPacket[]>('SELECT 2 AS v');
    expect(row?.['v']).toBe(2);
    await myTx.query('COMMIT');
    expect((await pgTx.query('SELECT 3 AS v')).rows).toEqual([{ v: 3 }]);
    await pgTx.query('COMMIT');

    expect(await call('POST', `/v1/edges/${EDGE}/resume`)).toEqual({ status: 200, json: { edge: EDGE, paused: false } });
    const [[myRow]] = await myHeld;
    expect(myRow?.['v']).toBe(7);
    expect((await pgHeld).rows).toEqual([{ v: 8 }]);
    expect(await rdHeld).toBe('nine');
    const after = (await sessions()).edges;
    for (const e of after) expect(e.statements_total).toBeGreaterThan(before.find((b) => b.protocol === e.protocol)?.statements_total ?? 0);
    const actions = (await call('GET', '/v1/actions')).json['actions'] as Record<string, unknown>[];
    expect(actions.slice(-2).map((a) => [a['action'], a['target'], a['token'], a['outcome']])).toEqual([
      ['pause', EDGE, 'ops', 'ok'],
      ['resume', EDGE, 'ops', 'ok'],
    ]);
    expect((await call('POST', '/v1/edges/no-such-edge/pause', {})).status).toBe(404);
  });

  it('fails a statement held past the pause deadline with an error saying so', async () => {
    expect((await call('POST', `/v1/edges/${EDGE}/pause`, { timeout_seconds: 1 })).status).toBe(200);
    await expect(my.query('SELECT 1')).rejects.toMatchObject({ errno: 1969, message: expect.stringContaining('paused by an administrator') });
    await expect(pgClient.query('SELECT 1')).rejects.toMatchObject({ code: '57014', message: expect.stringContaining('paused by an administrator') });
    await expect(rd.echo('x')).rejects.toThrow('paused by an administrator');
    await call('POST', `/v1/edges/${EDGE}/resume`);
    // the sessions go on after the refusal
    const [[row]] = await my.query<RowDataPacket[]>('SELECT 5 AS v');
    expect(row?.['v']).toBe(5);
    expect((await pgClient.query('SELECT 6 AS v')).rows).toEqual([{ v: 6 }]);
    expect(await rd.echo('y')).toBe('y');
  });
});
