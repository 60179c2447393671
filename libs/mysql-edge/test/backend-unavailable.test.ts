// A backend that refuses connections while topology still counts it up (health checks tolerate many
// failures): the client of the pooled path and of authentication passthrough reads a stable
// "backend ... is unavailable" ERR naming the backend by its configured name, never the OS error
// (ECONNREFUSED) or the backend's address, which stay in the edge log.
import fs from 'node:fs';
import { startMariaDb, waitFor } from '@dbproxy/testing';
import { applyMysqlSetting, applySetting, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
const logged: string[] = [];
const realWrite = fs.write;

/** Publishes `[health] failures_before_down`, so a refusing backend stays up in topology's view. */
function tolerateFailedChecks(count: number): Promise<void> {
  return applySetting(edge, 'health', 'failures_before_down', count);
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  // the edge log: pino writes JSON lines to fd 1 with fs.write, read back below
  fs.write = ((fd: number, chunk: unknown, ...rest: unknown[]) => {
    if (fd === 1) logged.push(String(chunk));
    return (realWrite as (...args: unknown[]) => void)(fd, chunk, ...rest);
  }) as typeof fs.write;
  edge = await startEdge([{ name: 'db1', host: db.primary.host, port: db.primary.port, role: 'primary' }]);
  await tolerateFailedChecks(100_000);
  await db.primary.kill();
});

afterAll(async () => {
  fs.write = realWrite;
  await edge?.stop();
  await db?.destroy();
});

const address = () => `${db.primary.host}:${db.primary.port}`;

function expectUnavailable(err: { errno?: number; sqlState?: string; message?: string }): void {
  expect(err).toMatchObject({ errno: 1429, sqlState: 'HY000', message: 'Cannot connect to backend db1: it is unavailable (details in the edge log)' });
  expect(err.message).not.toMatch(/ECONN|refused/i);
  expect(err.message).not.toContain(address());
}

it('answers a query on the pooled path with the stable text, the OS error only in the log', async () => {
  expect((await edge.backend('db1')).healthy).toBe(true);
  const c = await edge.connect();
  const failure = (await c.query('SELECT 1').catch((err: unknown) => err)) as { errno?: number; message?: string };
  expectUnavailable(failure);
  await c.end().catch(() => undefined);
  await waitFor(() => logged.some((line) => line.includes('ECONNREFUSED') && line.includes(address())) || null, { description: 'the OS error in the edge log' });
});

it('refuses a passthrough login with the stable text', async () => {
  await applyMysqlSetting(edge, 'auth', 'passthrough');
  const failure = (await edge.connect().catch((err: unknown) => err)) as { errno?: number; message?: string };
  expectUnavailable(failure);
  await waitFor(() => logged.some((line) => line.includes('passthrough login') && line.includes('ECONNREFUSED') && line.includes(address())) || null, { description: 'the passthrough OS error in the edge log' });
});
