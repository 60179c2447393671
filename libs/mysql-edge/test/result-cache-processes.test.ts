// Issue 19's cache checker through two real mysql-edge processes (./bin/dbproxy, each with its
// topology service) sharing one Redis and one NATS: writers and readers on both, every read that
// starts after a write's OK must return that write or a later one; then the same run with the
// cache's Redis stopped mid-run (reads keep working, uncached, still no violation).
// Needs `npm run build` (npm test builds first).
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startMariaDb, startNats, startRedis, tmpDir, waitFor, type NatsServer, type TempDir } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { metricValue } from './harness';

jest.setTimeout(120_000);

const KEYS = [1, 2, 3, 4];
let db: Awaited<ReturnType<typeof startMariaDb>>;
let redis: Awaited<ReturnType<typeof startRedis>>;
let nats: NatsServer;
let dir: TempDir;

interface Edge {
  readonly proxy: DbproxyProcess;
  readonly rw: number;
  readonly admin: number;
}
let edges: Edge[] = [];

async function startCachingEdge(name: string): Promise<Edge> {
  const [rw, ro, admin] = [await freePort(), await freePort(), await freePort()];
  const path = writeConfig(
    dir.path,
    `${name}.toml`,
    `
[bus]
nats_url = "${nats.url}"
[telemetry]
log_level = "warn"
[proxy.admin]
listen = "127.0.0.1:${admin}"
[[users]]
name = "app"
password = "app-secret"
[mysql]
enabled = true
read_write_listen = "127.0.0.1:${rw}"
read_only_listen = "127.0.0.1:${ro}"
[mysql.cache]
enabled = true
redis_backend = "cache"
ttl_seconds = 60
max_entry_bytes = 4096
tables = ["cdb.counters"]
[postgres]
enabled = false
[redis]
enabled = false
[[redis_backends]]
name = "cache"
address = "127.0.0.1:${redis.primary.port}"
role = "primary"
[[mysql_backends]]
name = "primary"
address = "127.0.0.1:${db.primary.port}"
role = "primary"
`,
  );
  const proxy = startDbproxy(['start', 'mysql-edge', 'topology', '--config', path]);
  await waitForHttp(`http://127.0.0.1:${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${proxy.output()}`);
  });
  await waitForHttp(`http://127.0.0.1:${admin}/mysql/cache`).then(() =>
    waitFor(async () => ((await (await fetch(`http://127.0.0.1:${admin}/mysql/cache`)).json()) as { usable: boolean }).usable || null, { timeoutMs: 20_000, description: `${name}: cache usable` }),
  );
  return { proxy, rw, admin };
}

const connect = (e: Edge): Promise<Connection> => createConnection({ host: '127.0.0.1', port: e.rw, user: 'app', password: 'app-secret', database: 'cdb' });

async function metric(e: Edge, name: string, labels?: Record<string, string>): Promise<number> {
  return metricValue(await (await fetch(`http://127.0.0.1:${e.admin}/metrics`)).text(), `dbproxy_mysql_cache_${name}`, labels);
}
const total = async (name: string, labels?: Record<string, string>): Promise<number> => (await Promise.all(edges.map((e) => metric(e, name, labels)))).reduce((a, b) => a + b, 0);

interface CheckerRun {
  readonly violations: string[];
  readonly errors: string[];
  /** Reads answered, and those that started after `midRun` had finished. */
  readonly reads: number;
  readonly readsAfter: number;
}

/**
 * One writer per edge (its own keys; prepared autocommit UPDATEs and, every third round,
 * BEGIN/UPDATE/COMMIT) and three readers per edge alternating text and binary SELECTs of every key.
 * A write's value is the floor for reads that start after its OK.
 */
async function checker(durationMs: number, midRun?: { atMs: number; run: () => Promise<void> }): Promise<CheckerRun> {
  const base = Date.now();
  const first = await connect(edges[0] as Edge);
  const [rows] = await first.query<RowDataPacket[]>('SELECT MAX(n) AS m FROM counters');
  await first.end();
  // writers go on above every value so far; a key's floor is what this run's writes acknowledged
  const floor = Number(rows[0]?.['m']);
  const acked = new Map<number, number>(KEYS.map((k) => [k, 0]));
  const out = { violations: [] as string[], errors: [] as string[], reads: 0, readsAfter: 0 };
  let midDone = false;
  const deadline = base + durationMs;
  const writer = async (e: Edge, keys: number[]) => {
    const c = await connect(e);
    for (let n = floor + 1; Date.now() < deadline; n++) {
      for (const k of keys) {
        try {
          if (n % 3 === 0) {
            await c.query('BEGIN');
            await c.query('UPDATE counters SET n = ? WHERE id = ?', [n, k]);
            await c.query('COMMIT');
          } else await c.execute('UPDATE counters SET n = ? WHERE id = ?', [n, k]);
          acked.set(k, n);
        } catch (err) {
          out.errors.push(`write ${k}: ${(err as Error).message}`);
        }
      }
    }
    await c.end();
  };
  const reader = async (e: Edge) => {
    const c = await connect(e);
    while (Date.now() < deadline) {
      for (const k of KEYS) {
        const least = acked.get(k) as number;
        const after = midDone;
        try {
          const [n] = out.reads % 2 === 0 ? (await c.query<RowDataPacket[]>(`SELECT n FROM counters WHERE id = ${k}`))[0].map((r) => String(r['n'])) : (await c.execute<RowDataPacket[]>('SELECT n FROM counters WHERE id = ?', [k]))[0].map((r) => String(r['n']));
          out.reads++;
          if (after) out.readsAfter++;
          if (Number(n) < least) out.violations.push(`key ${k} on :${e.rw}: read ${n} after ${least} was acknowledged`);
        } catch (err) {
          out.errors.push(`read ${k}: ${(err as Error).message}`);
        }
      }
    }
    await c.end();
  };
  const middle = midRun
    ? new Promise((r) => setTimeout(r, midRun.atMs)).then(async () => {
        await midRun.run();
        midDone = true;
      })
    : Promise.resolve();
  await Promise.all([middle, writer(edges[0] as Edge, [1, 2]), writer(edges[1] as Edge, [3, 4]), ...edges.flatMap((e) => [reader(e), reader(e), reader(e)])]);
  return out;
}

beforeAll(async () => {
  dir = await tmpDir('mysql-cache-processes');
  [db, redis, nats] = await Promise.all([startMariaDb({ replicas: 0 }), startRedis({ replicas: 0 }), startNats()]);
  const c = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await c.query('CREATE DATABASE cdb');
  await c.query('CREATE TABLE cdb.counters (id INT PRIMARY KEY, n BIGINT NOT NULL)');
  await c.query('INSERT INTO cdb.counters VALUES (1, 0), (2, 0), (3, 0), (4, 0)');
  await c.end();
  edges = await Promise.all([startCachingEdge('edge-a'), startCachingEdge('edge-b')]);
});

afterAll(async () => {
  await Promise.all(edges.map((e) => e.proxy.stop()));
  await Promise.all([db?.destroy(), redis?.destroy(), nats?.destroy()]);
  await dir?.remove();
});

it('two mysql-edge processes sharing one Redis: no read returns a value older than a write acknowledged before it started', async () => {
  expect(new Set(edges.map((e) => e.proxy.child.pid)).size).toBe(2);
  const hits = await total('hits_total');
  const fromBus = await total('invalidations_total', { source: 'bus' });
  const run = await checker(8000);
  expect(run.errors).toEqual([]);
  expect(run.violations).toEqual([]);
  expect(run.reads).toBeGreaterThan(200);
  // the checker ran against the cache on both processes, and each heard the other's bumps
  for (const e of edges) expect(await metric(e, 'hits_total')).toBeGreaterThan(0);
  expect(await total('hits_total')).toBeGreaterThan(hits);
  expect(await total('invalidations_total', { source: 'bus' })).toBeGreaterThan(fromBus);
});

it('the same with the cache Redis stopped mid-run: reads keep working, uncached, with no violation', async () => {
  const run = await checker(8000, { atMs: 3000, run: () => redis.primary.stop() });
  const bypassed = await total('bypasses_total', { reason: 'unavailable' });
  expect(run.violations).toEqual([]);
  // at most the statement each of the 8 connections had in flight when Redis went away
  expect(run.errors.length).toBeLessThanOrEqual(8);
  expect(run.readsAfter).toBeGreaterThan(100);
  expect(bypassed).toBeGreaterThan(run.readsAfter / 2);
  const hits = await total('hits_total');
  const c = await connect(edges[1] as Edge);
  for (let i = 0; i < 10; i++) await c.query('SELECT n FROM counters WHERE id = 1');
  await c.end();
  expect(await total('hits_total')).toBe(hits);
});
