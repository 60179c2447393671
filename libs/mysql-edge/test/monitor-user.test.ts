// Health checks and pool accounts apart, against real MariaDB: a pool user with only SELECT/INSERT on
// one database keeps the primary up (SHOW SLAVE STATUS refused with 1227 is "no replication status"
// on a primary, not a failed check); [mysql] monitor_username makes topology check as that account
// (seen in the server's processlist); and when the primary is down, a query's error names it
// instead of "No usable replica backend", while the health check's failure is shown to the operator
// (GET /mysql/backends health_error), never to the client.
import { startMariaDb, waitFor } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, HEALTH_INTERVAL_SECONDS, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;

const POOL = { user: 'apponly', password: 'apponly-pw' };
const MONITOR = { user: 'monitor', password: 'monitor-pw' };

/** Users with connections open on the primary (the test's own root connection aside). */
async function connectedUsers(): Promise<string[]> {
  return withMariaDb(db.primary, async (c) => {
    const [rows] = await c.query<RowDataPacket[]>("SELECT DISTINCT user FROM information_schema.processlist WHERE user NOT IN ('root', 'system user', 'event_scheduler') AND id <> CONNECTION_ID()");
    return rows.map((r) => String(r['user'])).sort();
  });
}

async function withMariaDb<T>(server: { host: string; port: number }, work: (c: Connection) => Promise<T>): Promise<T> {
  const c = await createConnection({ host: server.host, port: server.port, user: 'root' });
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, HEALTH_INTERVAL_SECONDS * 1000 * 5));

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  await withMariaDb(db.primary, async (c) => {
    for (const sql of [
      'CREATE DATABASE appdb',
      'CREATE TABLE appdb.t (id INT PRIMARY KEY, v VARCHAR(20))',
      `CREATE USER '${POOL.user}'@'%' IDENTIFIED BY '${POOL.password}'`,
      `GRANT SELECT, INSERT ON appdb.* TO '${POOL.user}'@'%'`,
      `CREATE USER '${MONITOR.user}'@'%' IDENTIFIED BY '${MONITOR.password}'`,
      `GRANT SLAVE MONITOR ON *.* TO '${MONITOR.user}'@'%'`,
    ])
      await c.query(sql);
  });
  const extra = `username = "${POOL.user}"\npassword = "${POOL.password}"`;
  edge = await startEdge([{ name: 'db1', host: db.primary.host, port: db.primary.port, role: 'primary', extra }], `monitor_username = "${MONITOR.user}"\nmonitor_password = "${MONITOR.password}"`);
});

afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

async function roundTrip(c: Connection, id: number): Promise<string> {
  await c.query('INSERT INTO appdb.t VALUES (?, ?)', [id, `row ${id}`]);
  const [rows] = await c.query<RowDataPacket[]>('SELECT v FROM appdb.t WHERE id = ?', [id]);
  return String(rows[0]?.['v']);
}

it('checks the backend as the [mysql] monitor user', async () => {
  expect((await edge.backend('db1')).healthy).toBe(true);
  expect(await connectedUsers()).toContain(MONITOR.user);
  const c = await edge.connect();
  expect(await roundTrip(c, 1)).toBe('row 1');
  await c.end();
});

it('keeps a primary up whose health checks run as a pool user without SLAVE MONITOR', async () => {
  const document = structuredClone(edge.runtime.config.current().config.mysql) as Record<string, unknown>;
  expect(document['monitor_username']).toBe(MONITOR.user);
  await applyMysqlSetting(edge, 'monitor_password', undefined); // first: a password without its user does not validate
  await applyMysqlSetting(edge, 'monitor_username', undefined);
  await waitFor(async () => !(await connectedUsers()).includes(MONITOR.user), { description: 'the monitor connection as the monitor user closed' });
  await settle();
  expect(await connectedUsers()).toEqual([POOL.user]);
  expect((await edge.backend('db1')).healthy).toBe(true);
  expect((await edge.readyz()).status).toBe(200);
  const c = await edge.connect();
  expect(await roundTrip(c, 2)).toBe('row 2');
  await c.end();
});

it('names the backend that is down to the client, and why only to the operator', async () => {
  await applyMysqlSetting(edge, 'monitor_username', 'nobody');
  await edge.waitForBackend('db1', (b) => b.healthy === false, 'db1 down (its checks are refused)');
  const c = await edge.connect();
  const failure = (await c.query('SELECT v FROM appdb.t WHERE id = 1').catch((err: unknown) => err)) as { errno?: number; message?: string };
  expect(failure.errno).toBe(1429);
  expect(failure.message).toBe('No usable primary backend for shard "default": backend "db1" is down (its health checks fail; the failure is in GET /mysql/backends)');
  const write = (await c.query('INSERT INTO appdb.t VALUES (3, "x")').catch((err: unknown) => err)) as { message?: string };
  expect(write.message).toBe(failure.message);
  await c.end();
  // the check's own error (here the server's refusal; for a stopped server an OS error and its address) is the operator's
  expect((await edge.backend('db1'))['health_error']).toMatch(/Access denied for user 'nobody'/);
});
