// Tracing end to end: ./bin/dbproxy start (all services) exports OTLP/HTTP JSON to a receiver run
// here; real clients (mysql2, pg, ioredis, fetch) drive each edge and config-api; the span trees are
// checked (SERVER span per statement or command, CLIENT child to the backend, names, kinds,
// attributes, error status) and a sqlcommenter traceparent continues the client's trace.
// Uses the shared MariaDB, PostgreSQL and Redis (own database, own key prefix). Needs `npm run build`.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import Redis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { Kind, renderTree, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';

jest.setTimeout(120_000);

const DB = `trace_${randomBytes(4).toString('hex')}`;
const KEYS = ['db.system.name', 'db.operation.name', 'db.collection.name', 'db.namespace', 'server.address', 'server.port', 'db.response.status_code', 'dbproxy.backend', 'http.route', 'http.response.status_code'];
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

let receiver: OtlpReceiver;
let dir: TempDir;
let proc: DbproxyProcess;
const ports = { mysql: 0, pg: 0, redis: 0, api: 0, admin: 0 };

const children = (root: ReceivedSpan) => receiver.spans.filter((s) => s.parentSpanId === root.spanId && s.traceId === root.traceId);
const findSpan = (description: string, match: (s: ReceivedSpan) => boolean) =>
  waitFor(() => receiver.spans.find(match) ?? false, { timeoutMs: 15_000, description });

beforeAll(async () => {
  [receiver, dir] = await Promise.all([startOtlpReceiver(), tmpDir('tracing')]);
  for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
  const direct = await createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  await direct.query(`CREATE DATABASE ${DB}`);
  await direct.query(`CREATE TABLE ${DB}.items (id INT PRIMARY KEY, v VARCHAR(16))`);
  await direct.end();
  const config = writeConfig(
    dir.path,
    'tracing.toml',
    `[telemetry]\nlog_level = "warn"\notlp_endpoint = "${receiver.url}"\notlp_protocol = "http/json"\nsample_ratio = 1.0\nexport_delay_ms = 200\n` +
      `[proxy.admin]\nlisten = "127.0.0.1:${ports.admin}"\n[health]\ninterval_seconds = 1\n` +
      `[[users]]\nname = "app"\npassword = "trace-secret"\nmysql_auth_plugin = "mysql_native_password"\n` +
      `[mysql]\nenabled = true\nworkers = 1\nread_after_write_seconds = 0\npool_max_per_backend = 1\nread_write_listen = "127.0.0.1:${ports.mysql}"\nread_only_listen = "127.0.0.1:${await freePort()}"\n` +
      `[[mysql_backends]]\nname = "maria"\naddress = "127.0.0.1:3306"\nrole = "primary"\nusername = "root"\n` +
      `[postgres]\nenabled = true\nrouting_mode = "transaction"\nworkers = 1\nread_write_listen = "127.0.0.1:${ports.pg}"\nread_only_listen = "127.0.0.1:${await freePort()}"\n` +
      `[[postgres_backends]]\nname = "pg"\naddress = "127.0.0.1:5432"\nrole = "primary"\nusername = "postgres"\ndatabase = "postgres"\n` +
      `[redis]\nenabled = true\nmode = "command"\nworkers = 1\nread_write_listen = "127.0.0.1:${ports.redis}"\nread_only_listen = "127.0.0.1:${await freePort()}"\n` +
      `[[redis_backends]]\nname = "redis"\naddress = "127.0.0.1:6379"\nrole = "primary"\n` +
      `[config_api]\nlisten = "127.0.0.1:${ports.api}"\n[[config_api.tokens]]\nname = "t"\ntoken = "trace-token-0123456789"\nrole = "admin"\n`,
  );
  proc = startDbproxy(['start', '--config', config]);
  await waitForHttp(`http://127.0.0.1:${ports.admin}/readyz`, 200, 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${proc.output()}`);
  });
});

afterAll(async () => {
  await proc?.stop('SIGKILL');
  const direct = await createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  await direct.query(`DROP DATABASE IF EXISTS ${DB}`);
  await direct.end();
  await receiver?.close();
  await dir?.remove();
});

it('mysql-edge: SERVER span per statement with a CLIENT child naming MariaDB; an error marked; a traceparent continued', async () => {
  const c = await createConnection({ host: '127.0.0.1', port: ports.mysql, user: 'app', password: 'trace-secret', database: DB });
  await c.query("INSERT INTO items VALUES (1, 'secret-literal')");
  await c.query(`/*traceparent='00-${CLIENT_TRACE}-${CLIENT_SPAN}-01'*/ SELECT v FROM items WHERE id = 1`);
  await expect(c.query('SELECT * FROM missing_table')).rejects.toMatchObject({ errno: 1146 });
  await c.end();
  const select = await findSpan('the traced SELECT', (s) => s.name === 'SELECT items' && s.kind === Kind.SERVER && s.traceId === CLIENT_TRACE);
  expect(select).toMatchObject({ kind: Kind.SERVER, parentSpanId: CLIENT_SPAN, service: 'dbproxy' });
  expect(select.attributes).toMatchObject({ 'db.system.name': 'mariadb', 'db.operation.name': 'SELECT', 'db.collection.name': 'items', 'db.namespace': DB });
  expect(select.attributes['db.query.text']).toBe('SELECT v FROM items WHERE id = ?');
  // (with one pooled connection a statement may also have a pool wait child: the CLIENT one is looked for)
  const call = await waitFor(() => children(select).find((c) => c.kind === Kind.CLIENT) ?? false, { timeoutMs: 10_000, description: 'the CLIENT child' });
  expect(call).toMatchObject({ kind: Kind.CLIENT, name: 'SELECT items' });
  expect(call?.attributes).toMatchObject({ 'db.system.name': 'mariadb', 'server.address': '127.0.0.1', 'server.port': 3306, 'dbproxy.backend': 'maria' });
  const failed = await findSpan('the failing SELECT', (s) => s.name === 'SELECT missing_table' && s.kind === Kind.SERVER);
  expect(failed.status?.code).toBe(2);
  expect(failed.attributes['db.response.status_code']).toBe('1146');
  expect(JSON.stringify(receiver.spans)).not.toContain('secret-literal');
  console.log(`MySQL query:\n${renderTree(receiver.spans, select, KEYS)}\n${renderTree(receiver.spans, failed, KEYS)}`);
});

it('mysql-edge: a statement that waited for a pooled connection has a pool wait child before its CLIENT child', async () => {
  // pool_max_per_backend = 1: the second session's statement waits while the first one sleeps
  const [a, b] = await Promise.all([1, 2].map(() => createConnection({ host: '127.0.0.1', port: ports.mysql, user: 'app', password: 'trace-secret', database: DB })));
  const sleeping = (a as Awaited<ReturnType<typeof createConnection>>).query('SELECT SLEEP(0.3) AS s FROM items');
  await new Promise((resolve) => setTimeout(resolve, 100));
  await (b as Awaited<ReturnType<typeof createConnection>>).query('SELECT id FROM items WHERE id = 1');
  await sleeping;
  await Promise.all([a?.end(), b?.end()]);
  const waited = await findSpan('the SELECT that waited', (s) => s.name === 'SELECT items' && s.kind === Kind.SERVER && s.attributes['db.query.text'] === 'SELECT id FROM items WHERE id = ?');
  const kids = await waitFor(() => (children(waited).length >= 2 ? children(waited) : false), { timeoutMs: 10_000, description: 'pool wait and CLIENT children' });
  const wait = kids.find((k) => k.name === 'pool wait');
  const call = kids.find((k) => k.kind === Kind.CLIENT);
  expect(wait).toMatchObject({ kind: Kind.INTERNAL, parentSpanId: waited.spanId, traceId: waited.traceId });
  expect(call).toMatchObject({ name: 'SELECT items', parentSpanId: waited.spanId });
  // it waited for the sleeping statement's connection (about 0.2 s of its 0.3 s were left), then ran
  const ms = (span: ReceivedSpan) => Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6;
  expect(ms(wait as ReceivedSpan)).toBeGreaterThan(100);
  // the CLIENT span starts once the wait ended (its start time is given in whole milliseconds)
  const msOf = (nanos: string) => Number(BigInt(nanos) / 1_000_000n);
  expect(msOf((call as ReceivedSpan).startTimeUnixNano)).toBeGreaterThanOrEqual(msOf((wait as ReceivedSpan).endTimeUnixNano) - 1);
  console.log(`MySQL query that waited for the pool:\n${renderTree(receiver.spans, waited, KEYS)}`);
});

it('pg-edge (transaction mode): SERVER span per statement, CLIENT child to PostgreSQL, SQLSTATE on errors', async () => {
  const c = new Client({ host: '127.0.0.1', port: ports.pg, user: 'app', password: 'trace-secret', database: 'postgres' });
  await c.connect();
  await c.query(`/*traceparent='00-${CLIENT_TRACE}-${CLIENT_SPAN}-01'*/ SELECT relname FROM pg_class WHERE relname = 'pg_proc'`);
  await expect(c.query('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
  await c.end();
  const select = await findSpan('the pg SELECT', (s) => s.name === 'SELECT pg_class' && s.kind === Kind.SERVER && s.traceId === CLIENT_TRACE);
  expect(select).toMatchObject({ kind: Kind.SERVER, parentSpanId: CLIENT_SPAN, service: 'dbproxy' });
  expect(select.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT', 'db.namespace': 'postgres' });
  const call = await waitFor(() => children(select).find((s) => s.kind === Kind.CLIENT) ?? false, { timeoutMs: 10_000, description: 'the CLIENT child' });
  expect(call.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': 5432, 'dbproxy.backend': 'pg' });
  const failed = await findSpan('the failing pg SELECT', (s) => s.attributes['db.system.name'] === 'postgresql' && s.kind === Kind.SERVER && s.attributes['db.response.status_code'] === '22012');
  expect(failed.status?.code).toBe(2);
  console.log(`PostgreSQL query:\n${renderTree(receiver.spans, select, KEYS)}`);
});

it('redis-edge (command mode): a span per command with a CLIENT child to the node; an error reply marked by its prefix', async () => {
  const key = `trace:${randomBytes(4).toString('hex')}`;
  const r = new Redis({ host: '127.0.0.1', port: ports.redis, lazyConnect: true, maxRetriesPerRequest: 0 });
  await r.connect();
  await r.set(key, 'v');
  await expect(r.lpush(key, 'x')).rejects.toThrow(/WRONGTYPE/);
  await r.del(key);
  r.disconnect();
  const set = await findSpan('the SET span', (s) => s.name === 'SET' && s.kind === Kind.SERVER);
  expect(set.kind).toBe(Kind.SERVER);
  expect(set.attributes).toMatchObject({ 'db.system.name': 'redis', 'db.operation.name': 'SET', 'db.namespace': '0' });
  const call = await waitFor(() => children(set).find((s) => s.kind === Kind.CLIENT) ?? false, { timeoutMs: 10_000, description: 'the CLIENT child' });
  expect(call.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': 6379, 'dbproxy.backend': 'redis' });
  const failed = await findSpan('the LPUSH span', (s) => s.name === 'LPUSH' && s.kind === Kind.SERVER);
  expect(failed.status?.code).toBe(2);
  expect(failed.attributes['db.response.status_code']).toBe('WRONGTYPE');
  console.log(`Redis command:\n${renderTree(receiver.spans, set, KEYS)}\n${renderTree(receiver.spans, failed, KEYS)}`);
});

it('config-api requests get SERVER spans continuing a caller trace; topology health checks get CLIENT spans', async () => {
  const res = await fetch(`http://127.0.0.1:${ports.api}/v1/config`, { headers: { authorization: 'Bearer trace-token-0123456789', traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
  expect(res.status).toBe(200);
  const request = await findSpan('the config-api request', (s) => s.name === 'GET /v1/config');
  expect(request).toMatchObject({ kind: Kind.SERVER, traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
  expect(request.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/config', 'http.response.status_code': 200 });
  const check = await findSpan('a health check', (s) => s.name === 'health check maria');
  expect(check.kind).toBe(Kind.CLIENT);
  // the engine the server names, as the edges' spans name it (the shared server here is MariaDB)
  expect(check.attributes).toMatchObject({ 'db.system.name': 'mariadb', 'server.port': 3306, 'dbproxy.health.ok': true });
  const round = receiver.spans.find((s) => s.spanId === check.parentSpanId);
  expect(round).toMatchObject({ name: 'health check round mysql', kind: Kind.INTERNAL });
});
