// Transaction mode with pipeline_depth > 1: when every pooled connection is lent, replica-safe reads
// queue behind other sessions' reads on one of them. Each client must get exactly its own answers;
// writes, transactions and waiters are not starved; a cancel, a timeout or a client leaving touches
// only its own unit.
import { Client } from 'pg';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';
import { cancelRequest } from './raw-client';

jest.setTimeout(90_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;
const POOL = 2;

const connect = async () => {
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'postgres' });
  await c.connect();
  return c;
};

const pipelined = () => edge.metric('dbproxy_pg_pipelined_units_total');

beforeAll(async () => {
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg);
  edge = await startEdge(
    [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra: backend }],
    `routing_mode = "transaction"
pool_max_per_backend = ${POOL}
pool_acquire_timeout_seconds = 20
pipeline_depth = 4
query_timeout_seconds = 2
read_after_write_seconds = 0`,
    `[[users]]
name = "app"
password = "app-secret"`,
  );
  const setup = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await setup.connect();
  await setup.query('CREATE TABLE pipeline_log (client int, seq int, PRIMARY KEY (client, seq))');
  await setup.query(`GRANT ALL ON pipeline_log TO ${POOL_USER}`);
  await setup.end();
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

describe('pipelined reads', () => {
  it('gives 40 concurrent clients over a pool of 2 exactly their own answers, simple and extended, with writes in between', async () => {
    const before = await pipelined();
    const clients = await Promise.all(Array.from({ length: 40 }, () => connect()));
    const mismatches: string[] = [];
    await Promise.all(
      clients.map(async (c, id) => {
        for (let seq = 0; seq < 30; seq++) {
          if (id % 10 === 0 && seq % 5 === 0) {
            await c.query('INSERT INTO pipeline_log VALUES ($1, $2)', [id, seq]);
            continue;
          }
          const want = id * 1000 + seq;
          const got = seq % 2 === 0 ? (await c.query(`SELECT ${want} AS n, pg_sleep(0.002)`)).rows[0].n : (await c.query('SELECT $1::int AS n', [want])).rows[0].n;
          if (Number(got) !== want) mismatches.push(`client ${id} asked ${want}, got ${got}`);
        }
      }),
    );
    await Promise.all(clients.map((c) => c.end()));
    expect(mismatches).toEqual([]);
    expect(await pipelined()).toBeGreaterThan(before);
    const direct = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
    await direct.connect();
    const written = await direct.query('SELECT count(*)::int AS n FROM pipeline_log');
    await direct.end();
    expect(written.rows[0].n).toBe(4 * 6);
  });

  it('cancels a read queued behind another session\'s: it alone fails with 57014, at once, and its session goes on', async () => {
    const slow = await Promise.all(Array.from({ length: POOL }, () => connect()));
    const queued = await connect();
    const before = await pipelined();
    const running = slow.map((c) => c.query('SELECT 1 AS n, pg_sleep(1.2)'));
    await new Promise((r) => setTimeout(r, 200)); // both connections lent
    const started = Date.now();
    const victim = queued.query('SELECT 2 AS n').then(
      () => undefined,
      (err: { code?: string }) => err,
    );
    await waitFor(async () => (await pipelined()) > before, { timeoutMs: 2000, description: 'the read queued behind a running one' });
    const key = queued as unknown as { processID: number; secretKey: number };
    await cancelRequest(edge.rwPort, key.processID, key.secretKey);
    expect((await victim)?.code).toBe('57014');
    expect(Date.now() - started).toBeLessThan(1000);
    for (const result of await Promise.all(running)) expect(result.rows[0].n).toBe(1);
    expect((await queued.query('SELECT 3 AS n')).rows[0].n).toBe(3);
    await Promise.all([...slow, queued].map((c) => c.end()));
  });

  it('times out only the units that pass query_timeout_seconds, cancels what still runs on the server, and serves again', async () => {
    const slow = await Promise.all(Array.from({ length: POOL }, () => connect()));
    const queued = await connect();
    const before = await pipelined();
    const running = slow.map((c) => c.query('SELECT pg_sleep(30)').then(() => 'done', (err: { message: string }) => err.message));
    await new Promise((r) => setTimeout(r, 200));
    const behind = queued.query('SELECT 4 AS n').then(() => 'done', (err: { message: string }) => err.message);
    const outcomes = await Promise.all([...running, behind]);
    expect(await pipelined()).toBe(before + 1);
    for (const outcome of outcomes) expect(outcome).toMatch(/timeout|took longer/i);
    // the sleeps were cancelled when their connections closed: none is still running on the server
    const direct = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
    await direct.connect();
    const sleeping = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'";
    await waitFor(async () => (await direct.query(sleeping)).rows[0].n === 0, { timeoutMs: 3000, description: 'the timed-out sleeps cancelled' });
    await direct.end();
    const after = await Promise.all([...slow, queued].map(async (c) => (await c.query('SELECT 5 AS n')).rows[0].n));
    expect(after).toEqual([5, 5, 5]);
    await Promise.all([...slow, queued].map((c) => c.end()));
  });

  it('drops the answers of a client that left while queued, and the clients around it are served', async () => {
    const slow = await Promise.all(Array.from({ length: POOL }, () => connect()));
    const leaving = await connect();
    const after = await connect();
    leaving.on('error', () => undefined);
    const before = await pipelined();
    const running = slow.map((c, i) => c.query(`SELECT ${10 + i} AS n, pg_sleep(0.6)`));
    await new Promise((r) => setTimeout(r, 150));
    void leaving.query('SELECT 99 AS n, pg_sleep(0.2)').catch(() => undefined);
    await waitFor(async () => (await pipelined()) > before, { timeoutMs: 2000, description: 'the leaving client queued' });
    (leaving as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const next = after.query('SELECT 7 AS n');
    expect((await Promise.all(running)).map((r) => r.rows[0].n)).toEqual([10, 11]);
    expect((await next).rows[0].n).toBe(7);
    await Promise.all([...slow, after].map((c) => c.end()));
  });

  it('never queues writes or transactions: a BEGIN waits for a connection of its own and keeps it', async () => {
    const readers = await Promise.all(Array.from({ length: 6 }, () => connect()));
    const tx = await connect();
    await Promise.all(readers.slice(0, POOL).map((c) => c.query('SELECT pg_sleep(0.05)'))); // both pooled connections open and idle
    const before = await pipelined();
    const reads = readers.map((c) => c.query('SELECT pg_sleep(0.3)'));
    // two readers hold both connections, the other four are queued behind them
    await waitFor(async () => (await pipelined()) === before + 4, { timeoutMs: 2000, description: 'four readers queued' });
    await tx.query('BEGIN');
    const pid = (await tx.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    await tx.query('INSERT INTO pipeline_log VALUES (999, 1)');
    expect((await tx.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).toBe(pid);
    expect((await tx.query('SELECT count(*)::int AS n FROM pipeline_log WHERE client = 999')).rows[0].n).toBe(1);
    await tx.query('ROLLBACK');
    expect(await pipelined()).toBe(before + 4); // nothing of the transaction was queued
    await Promise.all(reads);
    await Promise.all([...readers, tx].map((c) => c.end()));
  });
});
