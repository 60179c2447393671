// The pool over real MariaDB sessions (mysql2, 127.0.0.1:3306): COM_RESET_CONNECTION between
// borrowers, the bound seen in the processlist, a session killed while idle, the acquire deadline.
import type { Connection as PromiseConnection } from 'mysql2/promise';
import { waitFor } from '@dbproxy/testing';
import { BackendPool } from '../src';
import { MysqlConnectionFactory, mysqlMonitor, mysqlSessions, type MysqlPooled } from './mysql-connection';
import { expectAcquireTimeout } from './acquire-deadline';

/** A database of our own: processlist rows with this DB are this test's pool sessions. */
const database = `dbproxy_pool_test_${process.pid}_${Date.now()}`;
let monitor: PromiseConnection;
let pool: BackendPool<MysqlPooled>;
let factory: MysqlConnectionFactory;

beforeAll(async () => {
  monitor = await mysqlMonitor();
  await monitor.query(`CREATE DATABASE \`${database}\``);
  await monitor.query(`CREATE TABLE \`${database}\`.items (id int primary key)`);
});
afterAll(async () => {
  await monitor.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await monitor.end();
});
beforeEach(() => {
  factory = new MysqlConnectionFactory(database);
});
afterEach(async () => {
  await pool.close();
  await waitFor(async () => (await mysqlSessions(monitor, database)).length === 0, { description: 'pool sessions to end' });
});

jest.setTimeout(30_000);

type Row = Record<string, unknown>;
async function one(conn: MysqlPooled, sql: string): Promise<Row> {
  const [rows] = await conn.sql.query(sql);
  return (rows as Row[])[0];
}

it('resets session state between borrowers: user variable, temporary table, open transaction', async () => {
  pool = new BackendPool({ backend: 'mariadb-primary', max: 1, factory });
  const first = await pool.acquire();
  await first.connection.sql.query('SET @leak = 42');
  await first.connection.sql.query('CREATE TEMPORARY TABLE leak (x int)');
  await first.connection.sql.query('BEGIN');
  await first.connection.sql.query('INSERT INTO items VALUES (1)');
  const threadId = first.connection.threadId;
  pool.release(first, { reusable: true });

  const second = await pool.acquire();
  expect(second.connection.threadId).toBe(threadId); // the same server session, reused
  expect(await one(second.connection, 'SELECT @leak AS leak, @@in_transaction AS in_tx')).toEqual({ leak: null, in_tx: 0 });
  await expect(second.connection.sql.query('SELECT * FROM leak')).rejects.toMatchObject({ code: 'ER_NO_SUCH_TABLE' });
  expect(await one(second.connection, 'SELECT count(*) AS n FROM items')).toEqual({ n: 0 }); // the insert was rolled back
  pool.release(second, { reusable: true });
  expect(pool.stats()).toMatchObject({ resetFailures: 0, creates: 1, checkouts: 2 });
});

it('serves 50 concurrent borrowers with a pool of 5 and never more than 5 server sessions', async () => {
  pool = new BackendPool({ backend: 'mariadb-primary', max: 5, factory, maxWaiters: 100, acquireTimeoutMs: 20_000 });
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) peak = Math.max(peak, (await mysqlSessions(monitor, database)).length);
  })();
  const borrower = async (i: number) => {
    const lease = await pool.acquire();
    try {
      return Number((await one(lease.connection, `SELECT ${i} AS n, SLEEP(0.02) AS s`)).n);
    } finally {
      pool.release(lease, { reusable: true });
    }
  };
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => borrower(i)));
  sampling = false;
  await sampler;
  expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i));
  expect(peak).toBe(5);
  expect(await mysqlSessions(monitor, database)).toHaveLength(5);
  expect(pool.stats()).toMatchObject({ creates: 5, checkouts: 50, total: 5, waiters: 0, acquireTimeouts: 0, resetFailures: 0 });
});

it('detects a session killed server-side while idle and replaces it; the next borrower sees no error', async () => {
  pool = new BackendPool({ backend: 'mariadb-primary', max: 2, minIdle: 1, sweepIntervalMs: 50, factory });
  await waitFor(() => pool.stats().idle === 1);
  const [killed] = await mysqlSessions(monitor, database);
  await monitor.query(`KILL ${killed}`);
  await waitFor(() => pool.stats().destroys.dead === 1 && pool.stats().idle === 1, { description: 'the pool to replace it' });
  expect(await mysqlSessions(monitor, database)).not.toContain(killed);

  const next = await pool.acquire();
  expect(await one(next.connection, 'SELECT 1 AS ok')).toEqual({ ok: 1 });
  expect(next.connection.threadId).not.toBe(killed);
  pool.release(next, { reusable: true });
  expect(pool.stats()).toMatchObject({ creates: 2, destroys: { dead: 1 }, acquireTimeouts: 0, createFailures: 0 });
});

it('fails an acquire on an exhausted pool with the typed timeout within the deadline ±50 ms', async () => {
  pool = new BackendPool({ backend: 'mariadb-primary', max: 2, factory });
  const held = await Promise.all([pool.acquire(), pool.acquire()]);
  await expectAcquireTimeout(pool, 300);
  for (const lease of held) pool.release(lease, { reusable: true });
});
