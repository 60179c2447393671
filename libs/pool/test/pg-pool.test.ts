// The pool over real PostgreSQL sessions (pg client, 127.0.0.1:5432): reset between borrowers,
// the bound seen server-side, a session killed while idle, and the acquire deadline.
import type { Client } from 'pg';
import { waitFor } from '@dbproxy/testing';
import { BackendPool, type ConnectionFactory } from '../src';
import { PgConnectionFactory, pgMonitor, pgSessions, type PgPooled } from './pg-connection';
import { expectAcquireTimeout } from './acquire-deadline';

const appName = `dbproxy-pool-test-${process.pid}-${Date.now()}`;
let monitor: Client;
let pool: BackendPool<PgPooled>;
let factory: PgConnectionFactory;

beforeAll(async () => {
  monitor = await pgMonitor();
});
afterAll(async () => {
  await monitor.end();
});
beforeEach(() => {
  factory = new PgConnectionFactory(appName);
});
afterEach(async () => {
  await pool.close();
  await waitFor(async () => (await pgSessions(monitor, appName)).length === 0, { description: 'pool sessions to end' });
});

jest.setTimeout(30_000);

it('resets session state between borrowers: temp table, setting, prepared statement, open transaction', async () => {
  pool = new BackendPool({ backend: 'pg-primary', max: 1, factory });
  const first = await pool.acquire();
  const c = first.connection.client;
  await c.query('CREATE TEMP TABLE leak (x int)');
  await c.query("SET dbproxy.leak = 'borrower-1'");
  await c.query('PREPARE leak_stmt AS SELECT 1');
  await c.query('BEGIN');
  await c.query('INSERT INTO leak VALUES (1)');
  const pid = first.connection.pid;
  pool.release(first, { reusable: true });

  const second = await pool.acquire();
  expect(second.connection.pid).toBe(pid); // the same server session, reused
  const { rows } = await second.connection.client.query<{ temp: string | null; leak: string | null; prepared: string; in_tx: boolean }>(
    `SELECT to_regclass('pg_temp.leak')::text AS temp,
            nullif(current_setting('dbproxy.leak', true), '') AS leak,
            (SELECT count(*) FROM pg_prepared_statements)::text AS prepared,
            now() <> statement_timestamp() AS in_tx`,
  );
  expect(rows[0]).toEqual({ temp: null, leak: null, prepared: '0', in_tx: false });
  pool.release(second, { reusable: true });
  expect(pool.stats()).toMatchObject({ resetFailures: 0, creates: 1, checkouts: 2 });
});

it('serves 50 concurrent borrowers with a pool of 5 and never more than 5 server sessions', async () => {
  pool = new BackendPool({ backend: 'pg-primary', max: 5, factory, maxWaiters: 100, acquireTimeoutMs: 20_000 });
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await pgSessions(monitor, appName)).length);
    }
  })();
  const borrower = async (i: number) => {
    const lease = await pool.acquire();
    try {
      const { rows } = await lease.connection.client.query<{ n: number }>('SELECT $1::int AS n, pg_sleep(0.02)', [i]);
      return rows[0].n;
    } finally {
      pool.release(lease, { reusable: true });
    }
  };
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => borrower(i)));
  sampling = false;
  await sampler;
  expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i));
  expect(peak).toBe(5);
  expect((await pgSessions(monitor, appName)).length).toBe(5);
  expect(pool.stats()).toMatchObject({ creates: 5, checkouts: 50, total: 5, waiters: 0, acquireTimeouts: 0, resetFailures: 0 });
});

it('detects a session killed server-side while idle and replaces it; the next borrower sees no error', async () => {
  // isAlive reads the client's own view (its 'error'/'end' events); the sweep asks it of every idle
  // connection, and minIdle opens the replacement before anyone asks.
  pool = new BackendPool({ backend: 'pg-primary', max: 2, minIdle: 1, sweepIntervalMs: 50, factory });
  await waitFor(() => pool.stats().idle === 1);
  const [killedPid] = await pgSessions(monitor, appName);
  await monitor.query('SELECT pg_terminate_backend($1)', [killedPid]);
  await waitFor(() => pool.stats().destroys.dead === 1 && pool.stats().idle === 1, { description: 'the pool to replace it' });
  expect(await pgSessions(monitor, appName)).not.toContain(killedPid);

  const next = await pool.acquire();
  const { rows } = await next.connection.client.query<{ ok: number }>('SELECT 1 AS ok');
  expect(rows[0].ok).toBe(1);
  expect(next.connection.pid).not.toBe(killedPid);
  pool.release(next, { reusable: true });
  expect(pool.stats()).toMatchObject({ creates: 2, destroys: { dead: 1 }, acquireTimeouts: 0, createFailures: 0 });
});

describe('a session killed while lent, handed back as reusable', () => {
  async function killWhileLent(): Promise<{ killedPid: number; nextPid: number }> {
    const lease = await pool.acquire();
    const killedPid = lease.connection.pid;
    await monitor.query('SELECT pg_terminate_backend($1)', [killedPid]);
    await waitFor(async () => !(await pgSessions(monitor, appName)).includes(killedPid));
    // The client has seen its session end, but the borrower ran nothing since and releases it as reusable.
    await waitFor(() => lease.connection.dead, { description: 'the client to see the termination' });
    pool.release(lease, { reusable: true });
    const next = await pool.acquire();
    await next.connection.client.query('SELECT 1');
    const nextPid = next.connection.pid;
    pool.release(next, { reusable: true });
    return { killedPid, nextPid };
  }

  it('is closed at release without a reset round trip when isAlive knows', async () => {
    pool = new BackendPool({ backend: 'pg-primary', max: 1, factory });
    const { killedPid, nextPid } = await killWhileLent();
    expect(nextPid).not.toBe(killedPid);
    expect(pool.stats()).toMatchObject({ creates: 2, resetFailures: 0, destroys: { dead: 1 } });
  });

  it('is closed as a reset failure by a factory without isAlive', async () => {
    const withoutAliveCheck: ConnectionFactory<PgPooled> = {
      create: (signal) => factory.create(signal),
      reset: (conn) => factory.reset(conn),
      destroy: (conn) => factory.destroy(conn),
    };
    pool = new BackendPool({ backend: 'pg-primary', max: 1, factory: withoutAliveCheck });
    const { killedPid, nextPid } = await killWhileLent();
    expect(nextPid).not.toBe(killedPid);
    expect(pool.stats()).toMatchObject({ creates: 2, resetFailures: 1, destroys: { 'reset-failed': 1 } });
  });
});

it('fails an acquire on an exhausted pool with the typed timeout within the deadline ±50 ms', async () => {
  pool = new BackendPool({ backend: 'pg-primary', max: 2, factory });
  const held = await Promise.all([pool.acquire(), pool.acquire()]);
  const err = await expectAcquireTimeout(pool, 300);
  expect(err.message).toMatch(/^no connection from pool pg-primary within 3\d\d ms$/);
  for (const lease of held) pool.release(lease, { reusable: true });
  expect(pool.stats().acquireTimeouts).toBe(1);
});
