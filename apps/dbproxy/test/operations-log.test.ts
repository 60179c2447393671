// What an operator reads at info level from a real ./bin/dbproxy: one line when a session opens
// and one when it closes (mysql2, pg, ioredis), failed logins without the password, a backend
// going down and up, the epoch applied, and a flood of failed logins bounded by
// [telemetry] log_rate_limit_per_second with a "suppressed K similar lines" summary.
import mysql from 'mysql2/promise';
import { Client } from 'pg';
import Redis from 'ioredis';
import { startRedis, tmpDir, waitFor, type RedisServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import type { DbproxyProcess } from '@dbproxy/runtime/testing';
import { APP_PASSWORD, logLines, opsPorts, opsToml, startOps, waitForLine, type LogLine, type OpsPorts } from './support/ops-process';

jest.setTimeout(120_000);

const RATE_LIMIT = 5;
const WRONG_PASSWORD = 'wrong-password-never-logged-7';

let dir: TempDir;
let redis: ReplicatedServers<RedisServer>;
let ports: OpsPorts;
let proc: DbproxyProcess;

beforeAll(async () => {
  dir = await tmpDir('ops-log');
  redis = await startRedis({ replicas: 0 });
  ports = await opsPorts();
  ({ proc } = await startOps(dir.path, opsToml({ ports, redisAddress: `127.0.0.1:${redis.primary.port}`, rateLimit: RATE_LIMIT }), ports.admin));
});

afterAll(async () => {
  await proc?.stop();
  await redis?.destroy();
  await dir?.remove();
});

const event = (name: string, extra: (l: LogLine) => boolean = () => true) => (l: LogLine) => l['event'] === name && extra(l);

describe('info-level operational log of a real dbproxy process', () => {
  it('logs the epoch applied and every backend up at start', () => {
    const lines = logLines(proc);
    expect(lines.find((l) => l.msg === 'configuration epoch applied')).toMatchObject({ level: 30, epoch: 1 });
    for (const backend of ['mysql-primary', 'pg-primary', 'redis-primary']) expect(lines.find(event('backend_up', (l) => l['backend'] === backend))).toBeDefined();
  });

  it('writes one line when a mysql2 session opens and one when it closes, none per statement', async () => {
    const conn = await mysql.createConnection({ host: '127.0.0.1', port: ports.mysql, user: 'app', password: APP_PASSWORD });
    const client = `127.0.0.1:${(conn as unknown as { connection: { stream: { localPort: number } } }).connection.stream.localPort}`;
    const opened = await waitForLine(proc, event('session_opened', (l) => l['client'] === client), 'mysql session_opened');
    expect(opened).toMatchObject({ level: 30, protocol: 'mysql', user: 'app', listener: 'read_write' });
    const before = logLines(proc).length;
    for (let i = 0; i < 20; i++) await conn.query('SELECT ? AS n', [i]);
    expect(logLines(proc).length).toBe(before);
    await conn.end();
    const closed = await waitForLine(proc, event('session_closed', (l) => l['client'] === client), 'mysql session_closed');
    expect(closed).toMatchObject({ level: 30, protocol: 'mysql', user: 'app', listener: 'read_write', reason: 'client_quit', detail: 'COM_QUIT', session: opened['session'] });
    expect(typeof closed['duration_ms']).toBe('number');
  });

  it('writes the open and close lines of a pg session (transaction mode)', async () => {
    const pg = new Client({ host: '127.0.0.1', port: ports.pg, user: 'app', password: APP_PASSWORD, database: 'postgres' });
    await pg.connect();
    const client = `127.0.0.1:${(pg as unknown as { connection: { stream: { localPort: number } } }).connection.stream.localPort}`;
    await pg.query('SELECT 1');
    await waitForLine(proc, event('session_opened', (l) => l['client'] === client && l['protocol'] === 'postgres' && l['user'] === 'app'), 'pg session_opened');
    await pg.end();
    const closed = await waitForLine(proc, event('session_closed', (l) => l['client'] === client), 'pg session_closed');
    expect(closed).toMatchObject({ protocol: 'postgres', user: 'app', listener: 'read_write', reason: 'client_quit' });
  });

  it('writes the open and close lines of an ioredis session, QUIT being the client quitting', async () => {
    const r = new Redis({ host: '127.0.0.1', port: ports.redisRo, lazyConnect: true, maxRetriesPerRequest: 0 });
    await r.connect();
    const client = `127.0.0.1:${(r as unknown as { stream: { localPort: number } }).stream.localPort}`;
    await r.ping();
    await waitForLine(proc, event('session_opened', (l) => l['client'] === client && l['protocol'] === 'redis' && l['listener'] === 'read_only'), 'redis session_opened');
    await r.quit();
    const closed = await waitForLine(proc, event('session_closed', (l) => l['client'] === client), 'redis session_closed');
    expect(closed).toMatchObject({ protocol: 'redis', reason: 'client_quit' });
  });

  it('logs a failed login through mysql2 and pg with address, user and reason, never the password', async () => {
    await expect(mysql.createConnection({ host: '127.0.0.1', port: ports.mysql, user: 'app', password: WRONG_PASSWORD })).rejects.toMatchObject({ errno: 1045 });
    await waitForLine(proc, event('login_failed', (l) => l['protocol'] === 'mysql' && l['user'] === 'app' && l['reason'] === 'wrong password' && /^127\.0\.0\.1:\d+$/.test(String(l['client']))), 'mysql login_failed');
    const pg = new Client({ host: '127.0.0.1', port: ports.pg, user: 'app', password: WRONG_PASSWORD, database: 'postgres' });
    await expect(pg.connect()).rejects.toMatchObject({ code: '28P01' });
    await waitForLine(proc, event('login_failed', (l) => l['protocol'] === 'postgres' && l['user'] === 'app' && l['reason'] === 'wrong password' && /^127\.0\.0\.1:\d+$/.test(String(l['client']))), 'pg login_failed');
    const unknown = new Client({ host: '127.0.0.1', port: ports.pg, user: 'nobody', password: WRONG_PASSWORD, database: 'postgres' });
    await expect(unknown.connect()).rejects.toMatchObject({ code: '28P01' });
    await waitForLine(proc, event('login_failed', (l) => l['user'] === 'nobody' && l['reason'] === 'unknown user'), 'pg unknown user');
    expect(proc.output()).not.toContain(WRONG_PASSWORD);
    expect(proc.output()).not.toContain(APP_PASSWORD);
  });

  it('logs a backend going down with the check error, and coming back up', async () => {
    const upLines = () => logLines(proc).filter(event('backend_up', (l) => l['backend'] === 'redis-primary')).length;
    const upBefore = upLines();
    await redis.primary.stop();
    const down = await waitForLine(proc, event('backend_down', (l) => l['backend'] === 'redis-primary'), 'redis backend_down', 20_000);
    expect(down).toMatchObject({ level: 40, protocol: 'redis', shard: 'default', role: 'primary', address: `127.0.0.1:${redis.primary.port}` });
    expect(String(down['error'])).not.toBe('');
    await redis.primary.start();
    await waitFor(() => upLines() > upBefore, { timeoutMs: 20_000, intervalMs: 100, description: 'redis backend_up again' });
  });

  it('bounds a flood of failed logins to the rate limit per second and sums up the rest', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a fresh one-second window
    const start = logLines(proc).length;
    const attempts = 40;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: attempts }, () => mysql.createConnection({ host: '127.0.0.1', port: ports.mysql, user: 'flood', password: WRONG_PASSWORD }).then(
        (c) => c.end(),
        () => undefined,
      )),
    );
    const seconds = Math.ceil((Date.now() - started) / 1000) + 1;
    const fromFlood = () => logLines(proc).slice(start);
    // the summary line is written when the window ends
    await waitFor(() => fromFlood().some((l) => l['event'] === 'login_failed' && typeof l['suppressed'] === 'number'), { timeoutMs: 5_000, intervalMs: 50, description: 'suppressed summary' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const written = fromFlood().filter((l) => l['event'] === 'login_failed' && l['user'] === 'flood');
    const summaries = fromFlood().filter((l) => l['event'] === 'login_failed' && typeof l['suppressed'] === 'number');
    expect(written.length).toBeLessThanOrEqual(RATE_LIMIT * seconds);
    expect(written.length).toBeGreaterThanOrEqual(RATE_LIMIT);
    expect(summaries[0]?.msg).toMatch(/^suppressed \d+ similar lines \(login_failed\)$/);
    const suppressed = summaries.reduce((n, l) => n + Number(l['suppressed']), 0);
    expect(written.length + suppressed).toBe(attempts);
  });
});
