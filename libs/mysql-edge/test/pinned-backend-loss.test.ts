// A pinned session (transaction or session state) whose backend connection dies between statements,
// through mysql-edge against real MariaDB: the client is told at once, with the server's own ERR when
// it sent one (wait_timeout), else 1927, and its connection closes, as a direct one would; it does
// not learn it only at its next statement.
import type { EventEmitter } from 'node:events';
import { type Connection, type RowDataPacket } from 'mysql2/promise';
import { type EdgeHarness } from './harness';
import { startPrimaryOnly, stopPrimaryOnly, type PrimaryOnly } from './primary-only';

jest.setTimeout(120_000);

let db: PrimaryOnly['db'];
let edge: EdgeHarness;
let root: Connection;

beforeAll(async () => {
  ({ db, edge, root } = await startPrimaryOnly('read_after_write_seconds = 0', ['CREATE DATABASE app', 'CREATE TABLE app.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT)']));
});

afterAll(() => stopPrimaryOnly({ db, edge, root }));

interface Ending {
  readonly error: (Error & { code?: unknown; fatal?: boolean }) | null;
  readonly afterMs: number;
}

/** Resolves when the client connection reports an error or its end, without a statement being sent (or after 5 s: never). */
function ending(c: Connection, since: number): Promise<Ending> {
  return new Promise((resolve) => {
    setTimeout(() => resolve({ error: null, afterMs: Infinity }), 5000).unref();
    // the callback connection under the promise wrapper emits the events
    const events = (c as unknown as { connection: EventEmitter }).connection;
    events.once('error', (error: Ending['error']) => resolve({ error, afterMs: Date.now() - since }));
    events.once('end', () => resolve({ error: null, afterMs: Date.now() - since }));
  });
}

async function backendThread(c: Connection): Promise<number> {
  const [[row]] = await c.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  return Number(row?.['id']);
}

it('wait_timeout ends a pinned transaction\'s backend connection: the client is told within seconds', async () => {
  const c = await edge.connect({ database: 'app' });
  await c.query('BEGIN');
  await c.query('INSERT INTO t (v) VALUES (1)');
  await c.query('SET SESSION wait_timeout = 1');
  const ended = await ending(c, Date.now());
  expect(ended.afterMs).toBeLessThan(4000);
  // mysql2 reports an ERR that comes between commands with its errno as the code; MariaDB 10.11
  // closes a timed-out connection without an ERR (MySQL 8.0.24+ and MariaDB 11 send 4031, passed on)
  expect(ended.error).toMatchObject({ code: 1927, fatal: true });
  expect(ended.error?.message).toContain('was lost');
  const [[row]] = await root.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM app.t WHERE v = 1');
  expect(Number(row?.['n'])).toBe(0);
  c.destroy();
});

it.each([
  ['a transaction', ['BEGIN']],
  ['session state (a user variable)', ['SET @x = 1']],
])('KILL of the backend thread of a session pinned by %s closes the client connection at once (1927)', async (_name, statements) => {
  const c = await edge.connect({ database: 'app' });
  for (const sql of statements) await c.query(sql);
  const thread = await backendThread(c);
  const since = Date.now();
  const ended = ending(c, since);
  await root.query(`KILL ${thread}`);
  const result = await ended;
  expect(result.afterMs).toBeLessThan(2000);
  // MariaDB closes a killed idle connection without an ERR: the edge says what happened
  expect(result.error).toMatchObject({ code: 1927, fatal: true });
  expect(result.error?.message).toContain('was lost');
  c.destroy();
  // other sessions go on
  const other = await edge.connect({ database: 'app' });
  await other.query('SELECT 1');
  await other.end();
});
