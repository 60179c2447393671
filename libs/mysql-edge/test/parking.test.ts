// Parked connections when every connection of the pool is lent (one per active session: sysbench's
// 32 threads on the default pool of 32): through mysql-edge against real MariaDB, with mysql2.
// While nobody waits, each session keeps its connection between statements (no trip back through
// the pool); a session that arrives then takes a parked one, and the sessions go on.
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { metricValue, type EdgeHarness } from './harness';
import { startPrimaryOnly, stopPrimaryOnly, type PrimaryOnly } from './primary-only';

jest.setTimeout(120_000);

let db: PrimaryOnly['db'];
let edge: EdgeHarness;
let root: Connection;

beforeAll(async () => {
  ({ db, edge, root } = await startPrimaryOnly('pool_max_per_backend = 2\nread_after_write_seconds = 0', ['CREATE DATABASE app', 'CREATE TABLE app.t (id INT PRIMARY KEY, v INT)', 'INSERT INTO app.t VALUES (1, 10), (2, 20)']));
});

afterAll(() => stopPrimaryOnly({ db, edge, root }));

/** Connections the sessions gave back to the pool so far (clean or reset). */
async function returned(): Promise<number> {
  return metricValue(await edge.metrics(), 'dbproxy_mysql_pool_resets_total');
}

/** The backend thread the session's statement runs on; `slow`: the statement lasts 0.3 s. */
async function threadOf(c: Connection, slow = false): Promise<number> {
  const [[row]] = await c.query<RowDataPacket[]>(slow ? 'SELECT CONNECTION_ID() AS id, SLEEP(0.3) AS slept' : 'SELECT CONNECTION_ID() AS id');
  return Number(row?.['id']);
}

it('sessions that fill the pool keep their connections parked while nobody waits, and a newcomer takes a parked one', async () => {
  const a = await edge.connect({ database: 'app' });
  const b = await edge.connect({ database: 'app' });
  // at the same time, so that each gets a connection of its own (one after the other, the second takes the first's parked one)
  const [threadA, threadB] = await Promise.all([threadOf(a, true), threadOf(b, true)]);
  expect(threadA).not.toBe(threadB); // both connections of the pool are lent now
  const before = await returned();
  for (let i = 0; i < 10; i++) {
    const [[ra]] = await a.execute<RowDataPacket[]>('SELECT v FROM t WHERE id = ?', [1]);
    const [[rb]] = await b.execute<RowDataPacket[]>('SELECT v FROM t WHERE id = ?', [2]);
    expect([ra?.['v'], rb?.['v']]).toEqual([10, 20]);
  }
  expect(await threadOf(a)).toBe(threadA);
  expect(await threadOf(b)).toBe(threadB);
  // every statement ran on the session's parked connection: none went back to the pool
  expect((await returned()) - before).toBe(0);
  // a third session finds no idle connection and takes a parked one; everyone goes on
  const c = await edge.connect({ database: 'app' });
  const [[rc]] = await c.execute<RowDataPacket[]>('SELECT v FROM t WHERE id = ?', [2]);
  expect(rc?.['v']).toBe(20);
  const rows = await Promise.all([a, b, c].map(async (s) => (await s.execute<RowDataPacket[]>('SELECT v FROM t WHERE id = ?', [1]))[0][0]?.['v']));
  expect(rows).toEqual([10, 10, 10]);
  await Promise.all([a.end(), b.end(), c.end()]);
});
