// COM_RESET_CONNECTION and COM_CHANGE_USER through mysql-edge against real MariaDB, after every kind
// of statement that leaves the session holding a backend connection (a parked one after a read or
// a write, a pinned one in a transaction or with session state): the session goes on with clean
// state, as on a direct connection.
import { createPool, type Connection, type RowDataPacket } from 'mysql2/promise';
import { APP_USER, type EdgeHarness } from './harness';
import { startPrimaryOnly, stopPrimaryOnly, type PrimaryOnly } from './primary-only';

jest.setTimeout(120_000);

let db: PrimaryOnly['db'];
let edge: EdgeHarness;
let root: Connection;

beforeAll(async () => {
  ({ db, edge, root } = await startPrimaryOnly('read_after_write_seconds = 0', ['CREATE DATABASE app', 'CREATE TABLE app.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT)']));
});

afterAll(() => stopPrimaryOnly({ db, edge, root }));

/** Statements after which the session holds a connection: parked (read, write) or pinned (transaction, session state). */
const BEFORE: readonly [string, readonly string[]][] = [
  ['a plain read (parked connection)', ['SELECT v FROM t']],
  ['a write (parked, reset before another client)', ['INSERT INTO t (v) VALUES (1)']],
  ['an open transaction (pinned)', ['BEGIN', 'INSERT INTO t (v) VALUES (2)']],
  ['a user variable (session-state pin)', ['SET @mark = 42']],
  ['autocommit off (pinned)', ['SET autocommit = 0', 'INSERT INTO t (v) VALUES (3)']],
];

async function session(c: Connection): Promise<{ mark: unknown; autocommit: number; lastId: number }> {
  const [[row]] = await c.query<RowDataPacket[]>('SELECT @mark AS mark, @@autocommit AS autocommit, LAST_INSERT_ID() AS lastId');
  return row as { mark: unknown; autocommit: number; lastId: number };
}

async function count(v: number): Promise<number> {
  const [[row]] = await root.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM app.t WHERE v = ?', [v]);
  return Number(row?.['n']);
}

describe.each(BEFORE)('after %s', (_name, statements) => {
  it('COM_RESET_CONNECTION (mysql2 reset()) leaves clean state, and the session runs more statements', async () => {
    const c = await edge.connect({ database: 'app' });
    for (const sql of statements) await c.query(sql);
    await c.reset();
    expect(await session(c)).toEqual({ mark: null, autocommit: 1, lastId: 0 });
    await c.query('INSERT INTO t (v) VALUES (10)');
    const [[row]] = await c.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM t WHERE v = 10');
    expect(Number(row?.['n'])).toBeGreaterThan(0);
    await c.query('BEGIN');
    await c.query('INSERT INTO t (v) VALUES (11)');
    await c.query('COMMIT');
    await c.reset();
    await c.reset();
    expect(await session(c)).toEqual({ mark: null, autocommit: 1, lastId: 0 });
    await c.end();
  });

  it('COM_CHANGE_USER (mysql2 changeUser()) leaves clean state, and the session runs more statements', async () => {
    const c = await edge.connect({ database: 'app' });
    for (const sql of statements) await c.query(sql);
    await c.changeUser({ user: 'native', password: 'native-secret', database: 'app' });
    expect(await session(c)).toEqual({ mark: null, autocommit: 1, lastId: 0 });
    await c.query('SELECT v FROM t');
    await c.changeUser({ user: 'app', password: 'app-secret', database: 'app' });
    const [[user]] = await c.query<RowDataPacket[]>('SELECT 1 AS one');
    expect(user?.['one']).toBe(1);
    await c.end();
  });
});

it('an open transaction is rolled back by the reset: its write is never committed', async () => {
  const c = await edge.connect({ database: 'app' });
  await c.query('BEGIN');
  await c.query('INSERT INTO t (v) VALUES (77)');
  await c.reset();
  await c.query('SELECT 1');
  expect(await count(77)).toBe(0);
  await c.end();
});

it('a pool whose borrowers reset their connection before release goes on after reads and writes', async () => {
  const pool = createPool({ host: '127.0.0.1', port: edge.rwPort, ...APP_USER, database: 'app', connectionLimit: 2 });
  for (let i = 0; i < 20; i++) {
    const c = await pool.getConnection();
    await c.query(i % 2 === 0 ? 'SELECT v FROM t' : 'INSERT INTO t (v) VALUES (5)');
    await c.reset();
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @@autocommit AS a');
    expect(row?.['a']).toBe(1);
    c.release();
  }
  await pool.end();
});
