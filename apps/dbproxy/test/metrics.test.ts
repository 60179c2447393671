// /metrics of the all-in-one ./bin/dbproxy start, driven by real clients (mysql2, pg, ioredis,
// fetch) through the machine's MariaDB, PostgreSQL and Redis: promtool check metrics passes, every
// counter is named _total, series known at start exist at zero, the latency histograms move by
// exactly the statements sent, and every PromQL expression of deploy/grafana names exported metrics.
// Needs `npm run build` (bin/dbproxy runs dist/).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { freePort, startRedis, tmpDir, type RedisServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import { metricValue, startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');
const N = 25;
const TOKEN = 'metrics-admin-token-0123456789abcdef';
const PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

/** Metric families of an exposition: name → type. */
function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1] as string, m[2] as string);
  return out;
}

/** Metric names a PromQL expression reads (identifiers that are not functions, keywords, labels or durations). */
function metricNames(expr: string): string[] {
  const stripped = expr.replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '').replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = [...stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)].filter((m) => m[2] === undefined).map((m) => m[1] as string);
  return names.filter((n) => !/^(sum|min|max|avg|count|rate|increase|histogram_quantile|and|or|unless|le)$/.test(n) && !/^\d/.test(n));
}

/** Every GET route a service adds to the admin HTTP, read from the sources so that a new route is walked too. */
function adminGetRoutes(): string[] {
  const routes = new Set(['/healthz', '/readyz']);
  const libs = join(ROOT, 'libs');
  for (const lib of readdirSync(libs)) {
    const src = join(libs, lib, 'src');
    let files: string[];
    try {
      files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
    } catch {
      continue;
    }
    for (const file of files) for (const m of readFileSync(join(src, file), 'utf8').matchAll(/method: 'GET',\s*url: '(\/[^']*)'/g)) routes.add(m[1] as string);
  }
  return [...routes].flatMap((r) => (r.includes(':protocol') ? ['mysql', 'postgres', 'redis'].map((p) => r.replace(':protocol', p)) : [r]));
}

describe('metrics of every service (all-in-one)', () => {
  let dir: TempDir;
  let proc: DbproxyProcess;
  let admin: string;
  let api: string;
  const ports: Record<string, number> = {};
  const scrape = async (): Promise<string> => (await fetch(`${admin}/metrics`)).text();

  beforeAll(async () => {
    dir = await tmpDir('metrics');
    for (const k of ['admin', 'api', 'mysqlRw', 'mysqlRo', 'pgRw', 'pgRo', 'redisRw', 'redisRo']) ports[k] = await freePort();
    admin = `http://127.0.0.1:${ports['admin']}`;
    api = `http://127.0.0.1:${ports['api']}`;
    const config = writeConfig(
      dir.path,
      'dbproxy.toml',
      `[bus]\nconnect_timeout_seconds = 1\n[telemetry]\nlog_level = "warn"\n[proxy.admin]\nlisten = "127.0.0.1:${ports['admin']}"\n[health]\ninterval_seconds = 0.5\n` +
        `[[users]]\nname = "app"\npassword = "metrics-secret"\nmysql_auth_plugin = "mysql_native_password"\n` +
        `[mysql]\nenabled = true\nworkers = 1\nread_write_listen = "127.0.0.1:${ports['mysqlRw']}"\nread_only_listen = "127.0.0.1:${ports['mysqlRo']}"\n` +
        `[[mysql_backends]]\nname = "mysql-primary"\naddress = "127.0.0.1:3306"\nrole = "primary"\nusername = "root"\n` +
        `[postgres]\nenabled = true\nrouting_mode = "transaction"\nworkers = 2\nread_write_listen = "127.0.0.1:${ports['pgRw']}"\nread_only_listen = "127.0.0.1:${ports['pgRo']}"\n` +
        `[[postgres_backends]]\nname = "pg-primary"\naddress = "127.0.0.1:5432"\nrole = "primary"\nusername = "postgres"\ndatabase = "postgres"\n` +
        `[redis]\nenabled = true\nmode = "command"\nworkers = 1\nread_write_listen = "127.0.0.1:${ports['redisRw']}"\nread_only_listen = "127.0.0.1:${ports['redisRo']}"\n` +
        `[[redis_backends]]\nname = "redis-primary"\naddress = "127.0.0.1:6379"\nrole = "primary"\n` +
        `[mysql.xa]\nenabled = true\njournal_path = "${join(dir.path, 'xa-journal')}"\n` +
        `[config_api]\nlisten = "127.0.0.1:${ports['api']}"\n[[config_api.tokens]]\nname = "ops"\ntoken = "${TOKEN}"\n`,
    );
    proc = startDbproxy(['start', '--config', config]);
    await waitForHttp(`${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${proc.output()}`);
    });
  });

  afterAll(async () => {
    await proc?.stop('SIGKILL');
    await dir?.remove();
  });

  it('passes promtool check metrics (skipped with a reason when promtool is absent)', async () => {
    const text = await scrape();
    if (!PROMTOOL) {
      console.warn('promtool not installed (apt-get install -y prometheus): promtool check skipped');
      return;
    }
    const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });

  it('names every counter _total and nothing else so, and shows series known at start at zero', async () => {
    const text = await scrape();
    for (const [name, type] of families(text)) {
      if (!name.startsWith('dbproxy_')) continue;
      expect(`${name} ${type}`).toBe(`${name} ${name.endsWith('_total') ? 'counter' : type === 'counter' ? 'counter named _total' : type}`);
    }
    expect(text).toMatch(/^dbproxy_config_rejected_total\{[^}]*\} 0$/m);
    expect(text).toMatch(/^dbproxy_pg_pool_acquire_timeouts_total\{[^}]*backend="pg-primary"[^}]*\} 0$/m);
    expect(text).toMatch(/^dbproxy_mysql_pool_checkouts_total\{[^}]*backend="mysql-primary"[^}]*\} 0$/m);
    expect(text).toMatch(/^dbproxy_connections_rejected_total\{[^}]*listener="read_only"[^}]*reason="max_connections"[^}]*\} 0$/m);
    expect(text).toMatch(/^dbproxy_bus_messages_dropped_total\{reason="malformed-json"[^}]*\} 0$/m);
    expect(text).toMatch(/^dbproxy_redis_commands_total\{type="read",shard="default",backend="redis-primary"[^}]*\} 0$/m);
    expect(text).toMatch(/^dbproxy_config_api_request_duration_seconds_count\{[^}]*route="\/v1\/config",method="GET"[^}]*\} 0$/m);
  });

  it('moves the latency histograms and counters by the statements real clients sent', async () => {
    const before = await scrape();
    const mysql = await createConnection({ host: '127.0.0.1', port: ports['mysqlRw'], user: 'app', password: 'metrics-secret' });
    for (let i = 0; i < N; i++) await mysql.query('SELECT 1');
    await mysql.end();
    const pg = new Client({ host: '127.0.0.1', port: ports['pgRw'], user: 'app', password: 'metrics-secret', database: 'postgres' });
    await pg.connect();
    for (let i = 0; i < N; i++) await pg.query('SELECT 1');
    await pg.end();
    const redis = new Redis({ host: '127.0.0.1', port: ports['redisRw'], enableReadyCheck: false, lazyConnect: true });
    await redis.connect();
    for (let i = 0; i < N; i++) await redis.get('dbproxy-metrics-test:absent');
    redis.disconnect();
    for (let i = 0; i < 3; i++) expect((await fetch(`${api}/v1/config`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => metricValue(after, name, labels) - metricValue(before, name, labels);
    // reads with no replica configured: sent to the primary as a fallback
    const mysqlLabels = { edge: 'mysql', listener: 'read_write', route: 'fallback', backend: 'mysql-primary' };
    const pgLabels = { edge: 'postgres', listener: 'read_write', route: 'fallback', backend: 'pg-primary' };
    for (const labels of [mysqlLabels, pgLabels]) {
      expect(delta('dbproxy_statement_duration_seconds_count', labels)).toBe(N);
      expect(delta('dbproxy_backend_duration_seconds_count', labels)).toBe(N);
      expect(delta('dbproxy_pool_wait_seconds_count', labels)).toBe(N);
      expect(delta('dbproxy_statement_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(N);
      // a SELECT 1 through the proxy takes more than nothing and (on any machine) under 10 s
      expect(delta('dbproxy_statement_duration_seconds_sum', labels)).toBeGreaterThan(0);
      expect(delta('dbproxy_statement_duration_seconds_bucket', { ...labels, le: '10' })).toBe(N);
      expect(delta('dbproxy_statement_duration_seconds_sum', labels)).toBeGreaterThanOrEqual(delta('dbproxy_backend_duration_seconds_sum', labels));
    }
    expect(delta('dbproxy_statement_duration_seconds_count', { edge: 'redis', listener: 'read_write', route: 'read', backend: 'redis-primary' })).toBe(N);
    expect(delta('dbproxy_config_api_requests_total', { route: '/v1/config', method: 'GET', status: '200' })).toBe(3);
    expect(delta('dbproxy_config_api_request_duration_seconds_count', { route: '/v1/config', method: 'GET' })).toBe(3);
    expect(delta('dbproxy_pg_pool_checkouts_total', { backend: 'pg-primary' })).toBeGreaterThanOrEqual(N);
  });

  it('answers every admin route of every service with snake_case keys', async () => {
    const routes = adminGetRoutes();
    // the services' own routes, found in their sources (the walk below covers whatever is added later)
    expect(routes).toEqual(expect.arrayContaining(['/mysql/backends', '/postgres/backends', '/redis/edge', '/bgd', '/topology', '/topology/redis', '/xa', '/sessions', '/pools']));
    const camel: string[] = [];
    const walk = (route: string, value: unknown): void => {
      if (Array.isArray(value)) return value.forEach((v) => walk(route, v));
      if (value === null || typeof value !== 'object') return;
      for (const [key, v] of Object.entries(value)) {
        if (/[A-Z]/.test(key)) camel.push(`${route}: ${key}`);
        walk(route, v);
      }
    };
    for (const route of routes) {
      const res = await fetch(`${admin}${route}`);
      expect(`${route} ${res.status}`).toBe(`${route} 200`);
      walk(route, await res.json());
    }
    expect(camel).toEqual([]);
  });

  it('has dashboard expressions that name only metrics the services export', async () => {
    const exported = families(await scrape());
    const known = (name: string) => exported.has(name) || (/_(bucket|sum|count)$/.test(name) && exported.get(name.replace(/_(bucket|sum|count)$/, '')) === 'histogram');
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'dashboards', 'dbproxy-overview.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));
    expect(exprs.length).toBeGreaterThan(10);
    const unknown = exprs.flatMap(({ panel, expr }) => metricNames(expr).filter((n) => !known(n)).map((n) => `${panel}: ${n}`));
    expect(unknown).toEqual([]);
  });
});

/** An all-in-one ./bin/dbproxy start on `sections` (plus admin and config-api on free ports); stop() ends it. */
async function startAllInOne(dir: string, name: string, sections: (ports: Record<string, number>) => string): Promise<{ admin: string; ports: Record<string, number>; stop: () => Promise<void> }> {
  const ports: Record<string, number> = {};
  for (const k of ['admin', 'api', 'rw', 'ro']) ports[k] = await freePort();
  const config = writeConfig(
    dir,
    `${name}.toml`,
    `[bus]\nconnect_timeout_seconds = 1\n[telemetry]\nlog_level = "warn"\n[proxy.admin]\nlisten = "127.0.0.1:${ports['admin']}"\n[health]\ninterval_seconds = 0.5\n` +
      `[[users]]\nname = "app"\npassword = "metrics-secret"\n${sections(ports)}` +
      `[config_api]\nlisten = "127.0.0.1:${ports['api']}"\n[[config_api.tokens]]\nname = "ops"\ntoken = "${TOKEN}"\n`,
  );
  const proc = startDbproxy(['start', '--config', config]);
  const admin = `http://127.0.0.1:${ports['admin']}`;
  await waitForHttp(`${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${proc.output()}`);
  });
  return {
    admin,
    ports,
    stop: async () => {
      await proc.stop('SIGKILL');
    },
  };
}

const histogramDelta = (before: string, after: string, name: string, labels: Record<string, string>) => metricValue(after, name, labels) - metricValue(before, name, labels);

describe('latency histograms of the relays: pg-edge transparent mode, redis-edge connection mode', () => {
  let dir: TempDir;
  let pgProxy: Awaited<ReturnType<typeof startAllInOne>>;
  let redisProxy: Awaited<ReturnType<typeof startAllInOne>>;

  beforeAll(async () => {
    dir = await tmpDir('metrics-relays');
    [pgProxy, redisProxy] = await Promise.all([
      startAllInOne(dir.path, 'pg', (p) =>
        `[postgres]\nenabled = true\nrouting_mode = "transparent"\nworkers = 1\nread_write_listen = "127.0.0.1:${p['rw']}"\nread_only_listen = "127.0.0.1:${p['ro']}"\n` +
        `[[postgres_backends]]\nname = "pg-primary"\naddress = "127.0.0.1:5432"\nrole = "primary"\nusername = "postgres"\ndatabase = "postgres"\n`),
      startAllInOne(dir.path, 'redis', (p) =>
        `[redis]\nenabled = true\nmode = "connection"\nworkers = 1\nread_write_listen = "127.0.0.1:${p['rw']}"\nread_only_listen = "127.0.0.1:${p['ro']}"\n` +
        `[[redis_backends]]\nname = "redis-primary"\naddress = "127.0.0.1:6379"\nrole = "primary"\n`),
    ]);
  });

  afterAll(async () => {
    await Promise.all([pgProxy?.stop(), redisProxy?.stop()]);
    await dir?.remove();
  });

  it('times each transparent exchange (query to ReadyForQuery) of a psql-like client, the login not among them', async () => {
    const labels = { edge: 'postgres', listener: 'read_write', route: 'primary', backend: 'pg-primary' };
    const before = await (await fetch(`${pgProxy.admin}/metrics`)).text();
    const pg = new Client({ host: '127.0.0.1', port: pgProxy.ports['rw'], user: 'postgres', database: 'postgres' });
    await pg.connect();
    for (let i = 0; i < N; i++) await pg.query('SELECT 1');
    await pg.query('SELECT pg_sleep(0.05)');
    await pg.end();
    const after = await (await fetch(`${pgProxy.admin}/metrics`)).text();
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_count', labels)).toBe(N + 1);
    expect(histogramDelta(before, after, 'dbproxy_backend_duration_seconds_count', labels)).toBe(N + 1);
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_sum', labels)).toBeGreaterThanOrEqual(0.05);
    // the pg_sleep(0.05) is the only one past 50 ms
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_bucket', { ...labels, le: '0.05' })).toBe(N);
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(N + 1);
  });

  it('times each connection-mode exchange (client bytes to the first reply bytes) of an ioredis client', async () => {
    const labels = { edge: 'redis', listener: 'read_write', route: 'connection', backend: 'redis-primary' };
    const redis = new Redis({ host: '127.0.0.1', port: redisProxy.ports['rw'], enableReadyCheck: false, lazyConnect: true });
    await redis.connect();
    await redis.ping(); // after ioredis's own CLIENT SETINFO at connect
    const before = await (await fetch(`${redisProxy.admin}/metrics`)).text();
    for (let i = 0; i < N; i++) await redis.get('dbproxy-metrics-test:absent');
    expect(await redis.blpop('dbproxy-metrics-test:empty-list', 0.1)).toBeNull();
    redis.disconnect();
    const after = await (await fetch(`${redisProxy.admin}/metrics`)).text();
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_count', labels)).toBe(N + 1);
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_sum', labels)).toBeGreaterThanOrEqual(0.1);
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_bucket', { ...labels, le: '0.1' })).toBe(N);
  });
});

describe('latency histograms of redis-edge command mode: fan-outs and blocking commands', () => {
  let dir: TempDir;
  let second: ReplicatedServers<RedisServer>;
  let proxy: Awaited<ReturnType<typeof startAllInOne>>;
  const prefix = `dbproxy-metrics-fanout-${process.pid}`;
  const keys = Array.from({ length: 20 }, (_, i) => `${prefix}:${i}`);

  beforeAll(async () => {
    dir = await tmpDir('metrics-fanout');
    second = await startRedis({ replicas: 0 });
    proxy = await startAllInOne(dir.path, 'redis-shards', (p) =>
      `[redis]\nenabled = true\nmode = "command"\nworkers = 1\nread_write_listen = "127.0.0.1:${p['rw']}"\nread_only_listen = "127.0.0.1:${p['ro']}"\n` +
      `[redis.sharding]\ndefault_shard = "a"\nmap = { kind = "hash", shards = ["a", "b"] }\n` +
      `[[redis_backends]]\nname = "redis-a"\naddress = "127.0.0.1:6379"\nrole = "primary"\nshard = "a"\n` +
      `[[redis_backends]]\nname = "redis-b"\naddress = "127.0.0.1:${second.primary.port}"\nrole = "primary"\nshard = "b"\n`);
  });

  afterAll(async () => {
    await proxy?.stop();
    await second?.destroy();
    await dir?.remove();
  });

  it('files fan-outs under backend "*" and blocking commands under route "blocking", each timed once', async () => {
    const redis = new Redis({ host: '127.0.0.1', port: proxy.ports['rw'], enableReadyCheck: false, lazyConnect: true });
    await redis.connect();
    await redis.ping(); // after ioredis's own CLIENT SETINFO at connect
    const before = await (await fetch(`${proxy.admin}/metrics`)).text();
    for (let i = 0; i < 5; i++) expect(await redis.mget(...keys)).toEqual(keys.map(() => null));
    expect(await redis.blpop(`{${prefix}}:list`, 0.1)).toBeNull();
    expect(await redis.call('WAIT', '0', '10')).toBe(0);
    redis.disconnect();
    const after = await (await fetch(`${proxy.admin}/metrics`)).text();
    const count = (labels: Record<string, string>) => histogramDelta(before, after, 'dbproxy_statement_duration_seconds_count', { edge: 'redis', listener: 'read_write', ...labels });
    // the five MGETs split over both shards, WAIT sent to every shard (merged by agg_min)
    expect(histogramDelta(before, after, 'dbproxy_redis_fanouts_total', { policy: 'key_order' })).toBe(5);
    expect(histogramDelta(before, after, 'dbproxy_redis_fanouts_total', { policy: 'min' })).toBe(1);
    expect(count({ route: 'read', backend: '*' })).toBe(5);
    expect(count({ route: 'other', backend: '*' })).toBe(1);
    // the BLPOP, on its shard's primary, filed apart from reads and writes: it lasts as long as it blocks
    const blocking = { route: 'blocking' };
    expect(count(blocking)).toBe(1);
    expect(count({ ...blocking, backend: 'redis-a' }) + count({ ...blocking, backend: 'redis-b' })).toBe(1);
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_sum', { edge: 'redis', route: 'blocking' })).toBeGreaterThanOrEqual(0.1);
    expect(histogramDelta(before, after, 'dbproxy_statement_duration_seconds_bucket', { edge: 'redis', route: 'blocking', le: '0.05' })).toBe(0);
  });
});
