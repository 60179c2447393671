// LOAD DATA LOCAL INFILE through mysql-edge (mysql.local_infile = true) with mysql2 against real
// MariaDB: a file of several MB in many packets lands on the server, an empty file gets the
// server's answer, a packet over max_packet_bytes and a client leaving mid-upload end that session
// without leaving a broken connection in the pool (one connection per backend: the next client
// gets it), clients without CLIENT_LOCAL_FILES and the feature switched off get the server's 4166.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { waitFor } from '@dbproxy/testing';
import { type Connection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, type EdgeHarness } from './harness';
import { startPrimaryOnly, stopPrimaryOnly, type PrimaryOnly } from './primary-only';

jest.setTimeout(120_000);

let db: PrimaryOnly['db'];
let edge: EdgeHarness;
let root: Connection;

const MAX_PACKET = 1024 * 1024;
const LOAD = "LOAD DATA LOCAL INFILE 'rows.csv' INTO TABLE t FIELDS TERMINATED BY ',' (id, v)";

beforeAll(async () => {
  ({ db, edge, root } = await startPrimaryOnly(`local_infile = true\npool_max_per_backend = 1\nmax_packet_bytes = ${MAX_PACKET}\nread_after_write_seconds = 0`, ['CREATE DATABASE app', 'CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(200)) ENGINE=InnoDB']));
});

afterAll(() => stopPrimaryOnly({ db, edge, root }));

beforeEach(async () => {
  await root.query('TRUNCATE TABLE app.t');
});

/** CSV lines `id,value` for ids [from, to), as 64 KiB buffers (one client packet each). */
function csv(from: number, to: number): Buffer {
  const lines: string[] = [];
  for (let id = from; id < to; id++) lines.push(`${id},${'x'.repeat(80)}${id}`);
  return Buffer.from(lines.join('\n') + '\n');
}

function chunks(data: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) out.push(data.subarray(at, at + size));
  return out;
}

async function serverDigest(): Promise<{ rows: number; digest: string }> {
  const [rows] = await root.query<RowDataPacket[]>('SELECT id, v FROM app.t ORDER BY id');
  return { rows: rows.length, digest: createHash('sha256').update(rows.map((r) => `${r['id']},${r['v']}`).join('\n')).digest('hex') };
}

async function loadThreads(): Promise<number> {
  const [rows] = await root.query<RowDataPacket[]>("SELECT id FROM information_schema.processlist WHERE info LIKE 'LOAD DATA%'");
  return rows.length;
}

it('relays a file of several MB in many packets: the server has every row', async () => {
  const data = csv(0, 60_000);
  expect(data.length).toBeGreaterThan(5 * 1024 * 1024);
  const c = await edge.connect({ database: 'app' });
  const [result] = await c.query<ResultSetHeader>({ sql: LOAD, infileStreamFactory: () => Readable.from(chunks(data, 64 * 1024)) });
  expect(result.affectedRows).toBe(60_000);
  const expected = createHash('sha256').update(data.toString().trimEnd()).digest('hex');
  expect(await serverDigest()).toEqual({ rows: 60_000, digest: expected });
  // the session goes on as usual on the same connection
  const [[row]] = await c.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM t');
  expect(row?.['n']).toBe(60_000);
  await c.end();
});

it('an empty file (the client ends it at once) gets the server answer, and the session goes on', async () => {
  const c = await edge.connect({ database: 'app' });
  const [result] = await c.query<ResultSetHeader>({ sql: LOAD, infileStreamFactory: () => Readable.from([]) });
  expect(result.affectedRows).toBe(0);
  const [[row]] = await c.query<RowDataPacket[]>('SELECT 1 AS one');
  expect(row?.['one']).toBe(1);
  await c.end();
});

it('a file packet over max_packet_bytes ends the session with 1153; the pool connection is not reused broken', async () => {
  const c = await edge.connect({ database: 'app' });
  const big = csv(0, 15_000);
  expect(big.length).toBeGreaterThan(MAX_PACKET);
  await expect(c.query({ sql: LOAD, infileStreamFactory: () => Readable.from([csv(100_000, 100_010), big]) })).rejects.toMatchObject({ errno: 1153 });
  await waitFor(async () => (await loadThreads()) === 0 || null, { description: 'the aborted LOAD ends on the server' });
  expect((await serverDigest()).rows).toBe(0);
  await nextClientWorks();
});

it('a client that disconnects mid-upload leaves no broken connection in the pool', async () => {
  const c = await edge.connect({ database: 'app' });
  const stalled = new Readable({ read() {} });
  stalled.push(csv(0, 1000));
  void c.query({ sql: LOAD, infileStreamFactory: () => stalled }).catch(() => undefined); // mysql2 never settles a query on destroy()
  await waitFor(async () => (await loadThreads()) === 1 || null, { description: 'the LOAD runs on the server' });
  c.destroy();
  await waitFor(async () => (await loadThreads()) === 0 || null, { description: 'the abandoned LOAD ends on the server' });
  expect((await serverDigest()).rows).toBe(0);
  await nextClientWorks();
});

it('a client without CLIENT_LOCAL_FILES, and every client once local_infile = false, gets the server refusal 4166', async () => {
  const without = await edge.connect({ database: 'app', flags: ['-LOCAL_FILES'] });
  await expect(without.query({ sql: LOAD, infileStreamFactory: () => Readable.from([csv(0, 10)]) })).rejects.toMatchObject({ errno: 4166 });
  await without.end();
  await applyMysqlSetting(edge, 'local_infile', false);
  const c = await edge.connect({ database: 'app' });
  await expect(c.query({ sql: LOAD, infileStreamFactory: () => Readable.from([csv(0, 10)]) })).rejects.toMatchObject({ errno: 4166, sqlState: 'HY000' });
  const [[row]] = await c.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM t');
  expect(row?.['n']).toBe(0);
  await c.end();
  await applyMysqlSetting(edge, 'local_infile', true);
});

/** With one pooled connection, the next client's load and read run on whatever the pool holds. */
async function nextClientWorks(): Promise<void> {
  const next = await edge.connect({ database: 'app' });
  const [result] = await next.query<ResultSetHeader>({ sql: LOAD, infileStreamFactory: () => Readable.from([csv(0, 100)]) });
  expect(result.affectedRows).toBe(100);
  const [[row]] = await next.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM t');
  expect(row?.['n']).toBe(100);
  await next.end();
}
