// Clients that go quiet, through mysql-edge against real MariaDB: one that stops reading its
// results neither holds up the next client of its backend connection nor outlives
// client_write_timeout_seconds; one that sends nothing is closed after client_read_timeout_seconds.
import { Command } from '@dbproxy/protocol-mysql';
import { startMariaDb } from '@dbproxy/testing';
import { APP_USER, startEdge, type EdgeHarness } from './harness';
import { RawClient } from './raw-client';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
const WRITE_TIMEOUT_MS = 1_000;
const READ_TIMEOUT_MS = 4_000;

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  edge = await startEdge(
    [{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'pool_max = 1' }],
    'read_after_write_seconds = 0\nquery_timeout_seconds = 4\npool_acquire_timeout_seconds = 20',
    '',
    '',
    `client_write_timeout_seconds = ${WRITE_TIMEOUT_MS / 1000}\nclient_read_timeout_seconds = ${READ_TIMEOUT_MS / 1000}`,
  );
});

afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

const queryPayload = (sql: string) => Buffer.concat([Buffer.of(Command.Query), Buffer.from(sql)]);

it('serves the next client of a backend connection whose previous client stopped reading its results', async () => {
  const stalled = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password);
  stalled.socket.pause();
  const other = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password);
  // each of the stalled client's results ends in the read that filled its socket sooner or later
  for (let i = 0; i < 300; i++) {
    stalled.send(queryPayload("SELECT REPEAT('x', 30000)"));
    await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    const answer = await other.query('SELECT 1');
    expect(answer.summary.err).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
  }
  stalled.end();
  other.end();
});

it('closes a client that leaves its results unread past client_write_timeout_seconds, also between its commands', async () => {
  const stalled = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password);
  stalled.socket.pause();
  // small results, each whole in one backend read: the client falls behind between commands
  const commands = 4000; // 64 MB: more than the socket buffers on both sides hold
  for (let i = 0; i < commands; i++) stalled.send(queryPayload(`SELECT REPEAT('y', 16000) AS r${i}`));
  // the write deadline (plus the sweep's second) passes, well before the read deadline would
  await new Promise((r) => setTimeout(r, WRITE_TIMEOUT_MS + 1_500));
  stalled.socket.resume();
  let results = 0;
  for (;;) {
    const packet = await stalled.next(READ_TIMEOUT_MS / 2);
    if (packet === null) break; // closed by the edge
    if (packet.payload[0] === 0xfe && packet.payload.length < 9) results++;
  }
  expect(results).toBeLessThan(commands);
  const other = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password);
  expect((await other.query('SELECT 1')).summary.err).toBeNull();
  stalled.end();
  other.end();
});

it('closes a client that sends nothing for client_read_timeout_seconds', async () => {
  const idle = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password);
  expect((await idle.query('SELECT 1')).summary.err).toBeNull();
  const started = Date.now();
  expect(await idle.next(READ_TIMEOUT_MS + 4_000)).toBeNull(); // the connection closed
  const waited = Date.now() - started;
  expect(waited).toBeGreaterThanOrEqual(READ_TIMEOUT_MS - 1_100); // the sweep's clock is up to a second old
  expect(waited).toBeLessThan(READ_TIMEOUT_MS + 2_000);
  idle.end();
});
