// A pooled connection whose backend was terminated while idle (pg_terminate_backend of idle
// sessions, idle_session_timeout) can be lent before the edge has read the backend's FATAL. The
// relay in front of PostgreSQL holds that FATAL back until the edge has written the unit to the
// dead connection: the unit must still be answered (run on another connection, as the backend never
// read it), while a statement terminated as it runs still fails with the backend's error.
import { Client } from 'pg';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { HeldRelay } from './held-relay';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(60_000);

let pg: ReplicatedServers<PostgresServer>;
let relay: HeldRelay;
let edge: EdgeHarness;

beforeAll(async () => {
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg);
  relay = await HeldRelay.start(pg.primary.host, pg.primary.port);
  const extra = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;
  edge = await startEdge(
    [{ name: 'primary', host: '127.0.0.1', port: relay.port, role: 'primary', extra }],
    'routing_mode = "transaction"\npool_max_per_backend = 1',
    '[[users]]\nname = "app"\npassword = "app-secret"',
  );
});

afterAll(async () => {
  await edge?.stop();
  await relay?.close();
  await pg?.destroy();
});

async function direct(sql: string, params: unknown[] = []): Promise<unknown[]> {
  const admin = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  try {
    return (await admin.query(sql, params)).rows;
  } finally {
    await admin.end();
  }
}

const connect = async () => {
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'postgres' });
  await c.connect();
  return c;
};

/** Terminates the idle backend of `c`'s pooled connection and holds its FATAL back; `unit` runs before the edge sees it. */
async function lentTerminated<T>(c: Client, unit: () => Promise<T>): Promise<{ answer: T; pid: number }> {
  const pid = (await c.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0].p;
  // once its reset after the unit (DISCARD ALL) is over, the connection sits idle in the pool
  const [{ port }] = await waitFor(async () => {
    const rows = (await direct("SELECT client_port AS port FROM pg_stat_activity WHERE pid = $1 AND state = 'idle' AND query = 'DISCARD ALL'", [pid])) as { port: number }[];
    return rows.length > 0 ? rows : undefined;
  }, { timeoutMs: 5_000, description: 'the pooled connection idle after its reset' });
  relay.hold(port);
  await direct('SELECT pg_terminate_backend($1)', [pid]);
  await waitFor(async () => relay.heldBytes() > 0, { timeoutMs: 5_000, description: 'the FATAL held in the relay' });
  const pending = unit();
  // the edge lends the dead connection and writes the unit to it before it sees the FATAL
  await new Promise((r) => setTimeout(r, 300));
  relay.release();
  return { answer: await pending, pid };
}

it('answers a query lent a pooled connection whose idle backend was terminated before the edge read its FATAL', async () => {
  const c = await connect();
  const { answer, pid } = await lentTerminated(c, () => c.query<{ two: number; p: number }>('SELECT 2 AS two, pg_backend_pid() AS p'));
  expect(answer.rows[0].two).toBe(2);
  expect(answer.rows[0].p).not.toBe(pid);
  expect((await c.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }]);
  await c.end();
});

it('answers a named prepared statement with parameters the same way, and keeps it usable', async () => {
  const c = await connect();
  const run = () => c.query<{ v: string; p: number }>({ name: 'lent-named', text: 'SELECT $1::text AS v, pg_backend_pid() AS p', values: ['x'] });
  const { answer, pid } = await lentTerminated(c, run);
  expect(answer.rows[0]).toMatchObject({ v: 'x' });
  expect(answer.rows[0].p).not.toBe(pid);
  expect((await run()).rows[0].v).toBe('x'); // node-postgres now sends only Bind/Execute for it
  await c.end();
});

it('still fails a statement whose backend is terminated while it runs (it is not run twice)', async () => {
  const c = await connect();
  const sql = 'SELECT pg_sleep(30), 4 AS running';
  const pending = c.query(sql);
  const [{ pid }] = (await waitFor(async () => {
    const rows = (await direct("SELECT pid FROM pg_stat_activity WHERE query = $1 AND state = 'active'", [sql])) as { pid: number }[];
    return rows.length > 0 ? rows : undefined;
  }, { timeoutMs: 10_000, description: 'the pooled connection running the query' })) as { pid: number }[];
  await direct('SELECT pg_terminate_backend($1)', [pid]);
  await expect(pending).rejects.toMatchObject({ code: '57P01', severity: 'ERROR' });
  await new Promise((r) => setTimeout(r, 300));
  expect(await direct('SELECT pid FROM pg_stat_activity WHERE query = $1', [sql])).toEqual([]);
  expect((await c.query('SELECT 5 AS five')).rows).toEqual([{ five: 5 }]);
  await c.end();
});
