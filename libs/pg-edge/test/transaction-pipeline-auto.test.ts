// Transaction mode with the default pipeline_depth ("auto"): reads are pipelined on lent
// connections only while units wait for the pool, at a depth following the waiters
// (min(16, 1 + ceil(waiters / pool size))). Many clients over a pool of 2: pipelining happens and
// every client gets its own answers; a saturated pool nobody waits for pipelines nothing; a failing
// statement queued among others' reads fails only its own client.
import { Client } from 'pg';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';

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
  // no pipeline_depth here: the shipped default ("auto") is under test
  edge = await startEdge(
    [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra: backend }],
    `routing_mode = "transaction"
pool_max_per_backend = ${POOL}
pool_acquire_timeout_seconds = 20
read_after_write_seconds = 0`,
    `[[users]]
name = "app"
password = "app-secret"`,
  );
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

describe('pipeline_depth = "auto" (the default)', () => {
  it('pipelines reads of 40 concurrent clients over a pool of 2, each client getting exactly its own answers', async () => {
    const before = await pipelined();
    const clients = await Promise.all(Array.from({ length: 40 }, () => connect()));
    const mismatches: string[] = [];
    await Promise.all(
      clients.map(async (c, id) => {
        for (let seq = 0; seq < 25; seq++) {
          const want = id * 1000 + seq;
          const got = seq % 2 === 0 ? (await c.query(`SELECT ${want} AS n, pg_sleep(0.002)`)).rows[0].n : (await c.query('SELECT $1::int AS n', [want])).rows[0].n;
          if (Number(got) !== want) mismatches.push(`client ${id} asked ${want}, got ${got}`);
        }
      }),
    );
    await Promise.all(clients.map((c) => c.end()));
    expect(mismatches).toEqual([]);
    expect(await pipelined()).toBeGreaterThan(before);
  });

  it('pipelines nothing for a single client', async () => {
    const before = await pipelined();
    const c = await connect();
    for (let seq = 0; seq < 100; seq++) expect((await c.query('SELECT $1::int AS n', [seq])).rows[0].n).toBe(seq);
    await c.end();
    expect(await pipelined()).toBe(before);
  });

  it('decides from the waiters: a saturated pool nobody waits for pipelines nothing; one waiter lets the next read join', async () => {
    const slow = await Promise.all(Array.from({ length: POOL }, () => connect()));
    const [first, second] = await Promise.all([connect(), connect()]);
    const before = await pipelined();
    const running = slow.map((c, i) => c.query(`SELECT ${i} AS n, pg_sleep(1.5)`));
    await new Promise((r) => setTimeout(r, 300)); // both connections lent, nobody waiting
    const waiting = first.query('SELECT 10 AS n');
    await new Promise((r) => setTimeout(r, 300));
    // depth 1 + ceil(0 / 2) = 1: the first read waits for a connection instead of joining
    expect(await pipelined()).toBe(before);
    const joining = second.query('SELECT 11 AS n');
    // one waiter now: depth 1 + ceil(1 / 2) = 2, so the second read joins a lent connection
    await waitFor(async () => (await pipelined()) === before + 1, { timeoutMs: 2000, description: 'the read joining a lent connection' });
    expect((await joining).rows[0].n).toBe(11);
    expect((await waiting).rows[0].n).toBe(10);
    expect((await Promise.all(running)).map((r) => r.rows[0].n)).toEqual([0, 1]);
    await Promise.all([...slow, first, second].map((c) => c.end()));
  });

  it('sends a failing statement queued among other clients\' reads to its own client only', async () => {
    const before = await pipelined();
    const clients = await Promise.all(Array.from({ length: 30 }, () => connect()));
    const wrong: string[] = [];
    let failures = 0;
    await Promise.all(
      clients.map(async (c, id) => {
        for (let seq = 0; seq < 20; seq++) {
          const want = id * 1000 + seq;
          if (id % 3 === 0 && seq % 4 === 1) {
            const err = await c.query(`SELECT ${want} / 0 AS n, pg_sleep(0.002)`).then(
              () => undefined,
              (e: { code?: string }) => e,
            );
            if (err?.code === '22012') failures++;
            else wrong.push(`client ${id} seq ${seq}: expected 22012, got ${err?.code ?? 'a result'}`);
            continue;
          }
          const got = seq % 2 === 0 ? (await c.query(`SELECT ${want} AS n, pg_sleep(0.002)`)).rows[0].n : (await c.query('SELECT $1::int AS n', [want])).rows[0].n;
          if (Number(got) !== want) wrong.push(`client ${id} asked ${want}, got ${got}`);
        }
      }),
    );
    await Promise.all(clients.map((c) => c.end()));
    expect(wrong).toEqual([]);
    expect(failures).toBe(10 * 5);
    expect(await pipelined()).toBeGreaterThan(before);
  });
});
