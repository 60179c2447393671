// pg-edge with worker processes, as ./bin/dbproxy on a real nats-server: `start pg-edge topology`
// admits connections in the primary and hands them to two workers, each with its own pools; GET
// /postgres/backends gathers both; SIGTERM lets an open transaction finish, then every process exits 0.
// Needs `npm run build` (bin/dbproxy runs dist/).
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startNats, startPostgres, tmpDir, waitFor, withTimeout, type NatsServer, type PostgresServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import type { BackendsReport } from './harness';

jest.setTimeout(120_000);

const CLIENTS = 8;
const POOL_MAX = 4;
const SHUTDOWN_SECONDS = 15;

/** The parent pid of a running process (field 4 of /proc/<pid>/stat). */
const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);

describe('pg-edge worker processes', () => {
  let dir: TempDir;
  let nats: NatsServer;
  let pg: ReplicatedServers<PostgresServer>;
  let proc: DbproxyProcess | undefined;
  let rwPort: number;
  let admin: string;

  const connect = async (): Promise<Client> => {
    const c = new Client({ host: '127.0.0.1', port: rwPort, user: 'app', password: 'workers-secret', database: 'postgres', connectionTimeoutMillis: 5000 });
    await c.connect();
    return c;
  };
  const direct = async (sql: string): Promise<Record<string, unknown>[]> => {
    const c = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
    await c.connect();
    try {
      return (await c.query(sql)).rows as Record<string, unknown>[];
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    [dir, nats, pg] = await Promise.all([tmpDir('pg-edge-workers'), startNats(), startPostgres({ replicas: 0 })]);
    await direct('CREATE TABLE drained (id int)');
    const [roPort, adminPort] = [await freePort(), await freePort()];
    rwPort = await freePort();
    admin = `http://127.0.0.1:${adminPort}`;
    const config = writeConfig(
      dir.path,
      'workers.toml',
      `[bus]\nnats_url = "${nats.url}"\nconnect_timeout_seconds = 2\n[telemetry]\nlog_level = "warn"\n` +
        `[proxy]\nshutdown_timeout_seconds = ${SHUTDOWN_SECONDS}\n[proxy.admin]\nlisten = "127.0.0.1:${adminPort}"\n[health]\ninterval_seconds = 0.3\n` +
        `[mysql]\nenabled = false\n[redis]\nenabled = false\n` +
        `[postgres]\nenabled = true\nrouting_mode = "transaction"\nworkers = 2\npool_max_per_backend = ${POOL_MAX}\n` +
        `read_write_listen = "127.0.0.1:${rwPort}"\nread_only_listen = "127.0.0.1:${roPort}"\n` +
        `[[users]]\nname = "app"\npassword = "workers-secret"\n` +
        `[[postgres_backends]]\nname = "primary"\naddress = "127.0.0.1:${pg.primary.port}"\nrole = "primary"\n`,
    );
    proc = startDbproxy(['start', 'pg-edge', 'topology', '--config', config]);
    await waitForHttp(`${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${proc?.output()}`);
    });
  });

  afterAll(async () => {
    await proc?.stop('SIGKILL');
    await Promise.allSettled([nats?.destroy(), pg?.destroy()]);
    await dir?.remove();
  });

  it('spreads clients over both workers, serves them from both, and drains on SIGTERM with exit code 0', async () => {
    const primaryPid = proc?.child.pid as number;
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect()));
    // Every client holds a transaction open: 8 at once is more than one process's pool of 4 allows.
    const backendPids = await Promise.all(
      clients.map(async (c) => {
        await c.query('BEGIN');
        return (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p as number;
      }),
    );
    expect(new Set(backendPids).size).toBe(CLIENTS);

    const report = (await (await fetch(`${admin}/postgres/backends`)).json()) as BackendsReport;
    const workerPids = report.processes.map((p) => p.pid);
    expect(new Set(workerPids).size).toBe(2);
    expect(workerPids).not.toContain(primaryPid);
    for (const pid of workerPids) expect(parentOf(pid)).toBe(primaryPid);
    expect(report.processes.map((p) => p.sessions)).toEqual([CLIENTS / 2, CLIENTS / 2]);
    expect(report.backends[0].transaction_pool).toMatchObject({ in_use: CLIENTS, capacity: 2 * POOL_MAX });
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`dbproxy_pg_sessions\\{mode="transaction",listener="read_write"[^}]*\\} ${CLIENTS}\\b`));
    // two workers' pools (the primary, which serves no connection, adds none), under the primary's one service label
    expect(metrics).toMatch(new RegExp(`^dbproxy_pg_pool_capacity\\{[^}]*\\} ${2 * POOL_MAX}$`, 'm'));
    expect(new Set([...metrics.matchAll(/^dbproxy_pg_\w+\{[^}]*service="([^"]+)"/gm)].map((m) => m[1]))).toEqual(new Set(['dbproxy']));

    await Promise.all(clients.map((c) => c.query('COMMIT')));
    const answers = await Promise.all(clients.map(async (c, i) => (await c.query('SELECT $1::int + 1 AS n', [i])).rows[0].n as number));
    expect(answers).toEqual(Array.from({ length: CLIENTS }, (_, i) => i + 1));

    // SIGTERM with a transaction open: no new connections, the open one finishes, then exit 0.
    const [holder, ...others] = clients;
    await holder.query('BEGIN');
    await holder.query('INSERT INTO drained VALUES (1)');
    const signalled = Date.now();
    proc?.child.kill('SIGTERM');
    await waitFor(async () => connect().then((c) => c.end().then(() => false), () => true), { timeoutMs: 10_000, description: 'new connections refused while draining' });
    await holder.query('INSERT INTO drained VALUES (2)');
    await holder.query('COMMIT');
    await Promise.all([holder, ...others].map((c) => c.end()));
    const code = await withTimeout(proc?.exited as Promise<number | null>, 30_000, 'dbproxy to exit after SIGTERM');
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(SHUTDOWN_SECONDS * 1000);
    for (const pid of workerPids) expect(() => process.kill(pid, 0)).toThrow();
    expect(await direct('SELECT count(*)::int AS n FROM drained')).toEqual([{ n: 2 }]);
  });
});
