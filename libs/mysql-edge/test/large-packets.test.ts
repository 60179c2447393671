// Commands and rows of 16 MiB and more through mysql-edge against real MariaDB: a payload that
// takes several frames (0xffffff-byte frames, then the rest) in either direction. The response to a
// command of k frames starts at sequence id k, as from the server itself.
import { createHash, randomBytes } from 'node:crypto';
import { Command } from '@dbproxy/protocol-mysql';
import { type Connection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { RawClient } from './raw-client';
import { APP_USER, type EdgeHarness } from './harness';
import { startPrimaryOnly, stopPrimaryOnly, type PrimaryOnly } from './primary-only';

jest.setTimeout(180_000);

const MIB = 1024 * 1024;
const MAX_FRAME = 0xffffff;

let db: PrimaryOnly['db'];
let edge: EdgeHarness;
let root: Connection;

// Moving 16-20 MiB keeps MariaDB and the edge's event loop busy for seconds on a loaded machine: the
// in-process health checks (1 s timeout, down after 2 failures by default) get room, as marking the
// primary down mid-test is not what this file is about (CI saw it once under full parallel load).
const HEALTH = { timeoutSeconds: 10, failuresBeforeDown: 5 };

beforeAll(async () => {
  ({ db, edge, root } = await startPrimaryOnly(
    `max_packet_bytes = ${128 * MIB}\nread_after_write_seconds = 0`,
    ['CREATE DATABASE app', 'CREATE TABLE app.blobs (id INT PRIMARY KEY, b LONGBLOB)'],
    { max_allowed_packet: String(128 * MIB) },
    HEALTH,
  ));
});

afterAll(() => stopPrimaryOnly({ db, edge, root }));

function sha1(b: Buffer): string {
  return createHash('sha1').update(b).digest('hex');
}

it('an INSERT of a 20 MiB blob (a two-frame COM_STMT_EXECUTE) succeeds and reads back identical', async () => {
  const c = await edge.connect({ database: 'app', maxPreparedStatements: 4 });
  const blob = randomBytes(20 * MIB);
  const [res] = await c.execute<ResultSetHeader>('INSERT INTO blobs VALUES (?, ?)', [1, blob]);
  expect(res.affectedRows).toBe(1);
  // the session goes on: the next statement's sequence ids start at 0 again
  const [[row]] = await c.execute<RowDataPacket[]>('SELECT b FROM blobs WHERE id = ?', [1]);
  expect(sha1(row?.['b'] as Buffer)).toBe(sha1(blob));
  await c.end();
});

it('a 33 MiB text INSERT (three frames) succeeds; a 40 MiB result row comes back identical through the text protocol', async () => {
  const c = await edge.connect({ database: 'app' });
  const blob = randomBytes(33 * MIB);
  // mysql2 writes the Buffer as X'..': a query of over 66 MiB, five frames
  const [res] = await c.query<ResultSetHeader>('INSERT INTO blobs VALUES (2, ?)', [blob]);
  expect(res.affectedRows).toBe(1);
  const [[row]] = await c.query<RowDataPacket[]>('SELECT b, LENGTH(b) AS n FROM blobs WHERE id = 2');
  expect(row?.['n']).toBe(blob.length);
  expect(sha1(row?.['b'] as Buffer)).toBe(sha1(blob));
  const [[doubled]] = await c.query<RowDataPacket[]>('SELECT CONCAT(b, b) AS bb FROM blobs WHERE id = 1');
  expect((doubled?.['bb'] as Buffer).length).toBe(40 * MIB);
  await c.end();
});

it('an ERR the edge answers to a multi-frame command carries the sequence id after the client\'s last frame', async () => {
  const raw = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password, 'app');
  // a 16 MiB request of two statements from a client without CLIENT_MULTI_STATEMENTS, refused by
  // the edge itself (1064): the ERR comes with sequence id 2, after frames 0 and 1
  const sql = `SELECT '${'x'.repeat(MAX_FRAME)}'; SELECT 1`;
  raw.send(Buffer.concat([Buffer.of(Command.Query), Buffer.from(sql)]));
  const err = await raw.next(30_000);
  expect(err?.payload[0]).toBe(0xff);
  expect(err?.payload.readUInt16LE(1)).toBe(1064);
  expect(err?.sequenceId).toBe(2);
  // the backend's own answer to a two-frame command also starts at 2
  const { packets, summary } = await raw.query(`SELECT LENGTH('${'y'.repeat(MAX_FRAME)}') AS n`);
  expect(summary.err).toBeNull();
  expect(packets[0]?.sequenceId).toBe(2);
  const { summary: after } = await raw.query('SELECT 1');
  expect(after.err).toBeNull();
  raw.end();
});
