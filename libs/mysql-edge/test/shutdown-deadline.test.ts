// A statement still running at proxy.shutdown_timeout_seconds: the runtime's shutdown (what SIGTERM
// runs) ends the session with ERR 1053 (ER_SERVER_SHUTDOWN, 08S01), which mysql2 reports, instead
// of a dropped socket; an idle session held open gets the same error unprompted.
import { startMariaDb } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(60_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  edge = await startEdge([{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' }], '', '', '', 'shutdown_timeout_seconds = 1');
});

afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

it('answers a SELECT SLEEP(30) still running at the shutdown deadline with ERR 1053, and an idle transaction too', async () => {
  const running = await edge.connect();
  const idle = await edge.connect();
  await idle.query('BEGIN');
  const idleError = new Promise<NodeJS.ErrnoException>((resolve) => idle.once('error', resolve));
  const sleeping = running.query('SELECT SLEEP(30)').then(
    () => undefined,
    (err: unknown) => err,
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = Date.now();
  await edge.runtime.shutdown('SIGTERM');
  expect(await sleeping).toMatchObject({ errno: 1053, sqlState: '08S01', message: 'Server shutdown in progress' });
  expect(await idleError).toMatchObject({ code: 1053, message: expect.stringContaining('Server shutdown in progress') });
  expect(Date.now() - started).toBeLessThan(5000);
  running.destroy();
  idle.destroy();
});
