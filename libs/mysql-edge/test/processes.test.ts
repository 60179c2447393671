// mysql-edge as ./bin/dbproxy with the real topology service: a replica stopped under load (reads
// continue on the primary; only statements in flight then may fail), and worker processes over
// NATS (connections spread over workers, figures and metrics gathered from all of them).
// Needs `npm run build` (npm test builds first).
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startMariaDb, startNats, tmpDir, waitFor, type NatsServer, type TempDir } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { metricValue } from './harness';

jest.setTimeout(180_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let dir: TempDir;

async function config(name: string, extra: string, natsUrl?: string): Promise<{ path: string; rw: number; admin: number }> {
  const [rw, ro, admin] = [await freePort(), await freePort(), await freePort()];
  const toml = `
${natsUrl ? `[bus]\nnats_url = "${natsUrl}"` : ''}
[telemetry]
log_level = "warn"
[proxy.admin]
listen = "127.0.0.1:${admin}"
[[users]]
name = "app"
password = "app-secret"
[health]
interval_seconds = 1
timeout_seconds = 1
failures_before_down = 1
successes_before_up = 1
[mysql]
enabled = true
read_write_listen = "127.0.0.1:${rw}"
read_only_listen = "127.0.0.1:${ro}"
read_after_write_seconds = 0
${extra}
[postgres]
enabled = false
[redis]
enabled = false
[[mysql_backends]]
name = "primary"
address = "127.0.0.1:${db.primary.port}"
role = "primary"
[[mysql_backends]]
name = "replica"
address = "127.0.0.1:${db.replicas[0]!.port}"
role = "replica"
`;
  return { path: writeConfig(dir.path, name, toml), rw, admin };
}

async function started(proxy: DbproxyProcess, admin: number): Promise<void> {
  await waitForHttp(`http://127.0.0.1:${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${proxy.output()}`);
  });
}

beforeAll(async () => {
  dir = await tmpDir('mysql-edge-processes');
  db = await startMariaDb({ replicas: 1 });
  const c = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await c.query('CREATE DATABASE app');
  await c.query('CREATE TABLE app.t (id INT PRIMARY KEY, v INT)');
  await c.query('INSERT INTO app.t VALUES (1, 10), (2, 20), (3, 30)');
  await c.end();
  await db.waitForReplicaCatchUp();
});

afterAll(async () => {
  await db?.destroy();
  await dir?.remove();
});

it('keeps serving reads from the primary when the replica stops under load', async () => {
  const { path, rw, admin } = await config('failover.toml', '');
  const proxy = startDbproxy(['start', 'mysql-edge', 'topology', '--config', path]);
  const clients: Connection[] = [];
  try {
    await started(proxy, admin);
    for (let i = 0; i < 8; i++) clients.push(await createConnection({ host: '127.0.0.1', port: rw, user: 'app', password: 'app-secret', database: 'app' }));
    const metric = async (route: string, backend: string) => metricValue(await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text(), 'dbproxy_mysql_queries_total', { route, backend });
    const errors: { phase: string; message: string }[] = [];
    const answered = { before: 0, stopping: 0, after: 0 };
    let phase: keyof typeof answered = 'before';
    let stop = false;
    const loops = clients.map(async (c, i) => {
      while (!stop) {
        try {
          const [[row]] = await c.execute<RowDataPacket[]>('SELECT v FROM t WHERE id = ?', [1 + (i % 3)]);
          expect(row?.['v']).toBe(10 * (1 + (i % 3)));
          answered[phase]++;
        } catch (err) {
          errors.push({ phase, message: (err as Error).message });
        }
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await metric('replica', 'replica')).toBeGreaterThan(50);
    phase = 'stopping';
    await db.replicas[0]!.stop();
    phase = 'after';
    const fallbackBefore = await metric('fallback', 'primary');
    await new Promise((r) => setTimeout(r, 3_000));
    stop = true;
    await Promise.all(loops);
    // nothing failed but, at most, the statement each client had in flight when the replica went away
    expect(errors.length).toBeLessThanOrEqual(clients.length);
    expect(errors.filter((e) => e.phase === 'after')).toEqual([]);
    expect(answered.after).toBeGreaterThan(100);
    expect((await metric('fallback', 'primary')) - fallbackBefore).toBeGreaterThan(100);
  } finally {
    for (const c of clients) c.destroy();
    await proxy.stop();
    await db.replicas[0]!.start();
    await db.waitForReplicaCatchUp();
  }
});

describe('worker processes', () => {
  let nats: NatsServer;
  beforeAll(async () => (nats = await startNats()));
  afterAll(() => nats?.destroy());

  it('places connections on the least-loaded worker, each with its own pools, and aggregates their metrics', async () => {
    const { path, rw, admin } = await config('workers.toml', 'workers = 2\npool_max_per_backend = 6', nats.url);
    const proxy = startDbproxy(['start', 'mysql-edge', 'topology', '--config', path]);
    const clients: Connection[] = [];
    try {
      await started(proxy, admin);
      for (let i = 0; i < 4; i++) clients.push(await createConnection({ host: '127.0.0.1', port: rw, user: 'app', password: 'app-secret', database: 'app' }));
      for (const c of clients) for (let n = 0; n < 5; n++) await c.query('SELECT v FROM t WHERE id = 1');
      const report = (await (await fetch(`http://127.0.0.1:${admin}/mysql/backends`)).json()) as { processes: { pid: number; sessions: number }[]; backends: { name: string; pool: { checkouts: number } | null }[] };
      const workers = report.processes.filter((p) => p.pid !== proxy.child.pid);
      expect(workers).toHaveLength(2);
      expect(workers.map((p) => p.sessions)).toEqual([2, 2]);
      const metrics = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
      expect(metricValue(metrics, 'dbproxy_mysql_queries_total', { route: 'replica', backend: 'replica' })).toBe(20);
      expect(metricValue(metrics, 'dbproxy_mysql_sessions')).toBe(4);
      // the two workers' shares of a pool of 6 add up to 6 (the primary, which serves no connection, adds none), under one service label
      expect(metricValue(metrics, 'dbproxy_mysql_pool_capacity', { backend: 'replica' })).toBe(6);
      expect(new Set([...metrics.matchAll(/^dbproxy_mysql_\w+\{[^}]*service="([^"]+)"/gm)].map((m) => m[1]))).toEqual(new Set(['dbproxy']));
      await waitFor(async () => {
        const edges = (await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text()).includes('dbproxy_mysql_pool_connections');
        return edges || null;
      });
    } finally {
      for (const c of clients) c.destroy();
      expect(await proxy.stop()).toBe(0);
    }
  });
});
