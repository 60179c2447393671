// Limits and failures through mysql-edge (beside the real topology service) against real MariaDB: a
// backend connection KILLed mid-query, query deadline, result and packet bounds, admission, pool
// exhaustion with the reserved pool, a drain-backend action applied by topology, and a
// configuration epoch arriving while a transaction is pinned.
import type { Socket } from 'node:net';
import { startMariaDb, waitFor } from '@dbproxy/testing';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, closeDirect, openDirect, startEdge, type DirectConnections, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: DirectConnections;

const MYSQL = `
query_timeout_seconds = 3
max_result_bytes = 100000
max_packet_bytes = 1048576
max_connections = 12
pool_max_per_backend = 2
pool_acquire_timeout_seconds = 1
read_after_write_seconds = 0`;

async function threadRunning(c: Connection, prefix: string): Promise<number> {
  return waitFor(async () => {
    const [rows] = await c.query<RowDataPacket[]>('SELECT id FROM information_schema.processlist WHERE info LIKE ?', [`${prefix}%`]);
    return rows[0] ? Number(rows[0]['id']) : false;
  }, { description: `a backend thread running ${prefix}` });
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  const replica = db.replicas[0]!;
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'reserved_pool = 1' },
      { name: 'replica', host: replica.host, port: replica.port, role: 'replica' },
    ],
    MYSQL,
  );
  direct = await openDirect(db, ['CREATE DATABASE app', 'CREATE TABLE app.t (id INT PRIMARY KEY, v INT)', 'INSERT INTO app.t VALUES (1, 1)']);
});

afterAll(async () => {
  await closeDirect(direct);
  await edge?.stop();
  await db?.destroy();
});

it('a backend connection KILLed mid-query gives that client an ERR; its next query succeeds', async () => {
  const c = await edge.connect({ database: 'app' });
  const running = c.query('SELECT SLEEP(30) AS s, v FROM t');
  const thread = await threadRunning(direct.replica, 'SELECT SLEEP(30)');
  await direct.replica.query(`KILL ${thread}`);
  // MariaDB closes a killed connection without an ERR of its own: the edge sends ER_NET_READ_ERROR
  await expect(running).rejects.toMatchObject({ errno: 1158, sqlState: '08S01', message: expect.stringContaining('Lost connection to backend replica') });
  const [[row]] = await c.query<RowDataPacket[]>('SELECT v FROM t WHERE id = 1');
  expect(row?.['v']).toBe(1);
  await c.end();
});

it('ends a statement past query_timeout_seconds with ERR 1969, closes that backend connection, and serves the next one', async () => {
  const c = await edge.connect({ database: 'app' });
  const started = Date.now();
  await expect(c.query('SELECT SLEEP(20)')).rejects.toMatchObject({ errno: 1969, sqlState: '70100' });
  expect(Date.now() - started).toBeLessThan(6_000);
  const [[row]] = await c.query<RowDataPacket[]>('SELECT 2 AS n');
  expect(row?.['n']).toBe(2);
  expect(await edge.metric('dbproxy_mysql_state_transitions_total', { kind: 'mysql-backend', to: 'closed' })).toBeGreaterThanOrEqual(1);
  await c.end();
});

it('bounds result bytes (ERR 1104 in place of the rest) and packet size (ERR 1153, then closed)', async () => {
  const c = await edge.connect({ database: 'app' });
  await expect(c.query('SELECT REPEAT("x", 1000) AS r FROM information_schema.collations')).rejects.toMatchObject({ errno: 1104 });
  const [[row]] = await c.query<RowDataPacket[]>('SELECT 3 AS n');
  expect(row?.['n']).toBe(3);
  await expect(c.query(`SELECT '${'y'.repeat(1_100_000)}' AS big`)).rejects.toMatchObject({ errno: 1153 });
  // the edge closed the connection: the socket under mysql2 is gone and nothing more is served
  await waitFor(() => (c as unknown as { connection: { stream: Socket } }).connection.stream.destroyed || null, { timeoutMs: 5_000, description: 'the edge to close the connection' });
  await expect(c.query('SELECT 4')).rejects.toThrow();
  c.destroy();
});

it('admits at most max_connections clients (ERR 1040 as the first packet)', async () => {
  const held: Connection[] = [];
  try {
    for (;;) {
      try {
        held.push(await edge.connect());
      } catch (err) {
        expect(err).toMatchObject({ errno: 1040 });
        break;
      }
      if (held.length > 20) throw new Error('admission did not stop');
    }
    expect(held.length).toBeLessThanOrEqual(12);
  } finally {
    for (const c of held) c.destroy();
  }
  await waitFor(async () => (await edge.connect().then((c) => (c.destroy(), true)).catch(() => false)) || null, { description: 'admitted again' });
});

it('gives BEGIN the reserved pool while ordinary primary connections are all busy, and times ordinary waiters out', async () => {
  const busy = await Promise.all([edge.connect({ database: 'app' }), edge.connect({ database: 'app' })]);
  const sleeping = busy.map((c) => c.query('DO SLEEP(1.8)'));
  await waitFor(async () => (await edge.metric('dbproxy_mysql_pool_in_use', { backend: 'primary' })) >= 2 || null);
  const tx = await edge.connect({ database: 'app' });
  const started = Date.now();
  await tx.query('BEGIN');
  await tx.query('UPDATE t SET v = v + 1 WHERE id = 1');
  expect(Date.now() - started).toBeLessThan(1_500);
  const waiter = await edge.connect({ database: 'app' });
  await expect(waiter.query('UPDATE t SET v = v WHERE id = 1')).rejects.toMatchObject({ errno: 1040 });
  await tx.query('COMMIT');
  await Promise.all(sleeping);
  expect(await edge.metric('dbproxy_mysql_pool_acquire_timeouts_total', { backend: 'primary' })).toBeGreaterThanOrEqual(1);
  for (const c of [...busy, tx, waiter]) await c.end();
});

it('retires a backend drained by a blue/green action: its pooled connections close, reads go to the primary until the deadline, then return', async () => {
  const ro = await edge.connect({ port: edge.roPort, database: 'app' });
  const servedBy = async () => Number((await ro.query<RowDataPacket[]>('SELECT @@server_id AS id'))[0][0]?.['id']);
  // the edge's pooled connections on the replica (its monitor and our own direct connection have no database)
  const pooledOnReplica = async () => Number((await direct.replica.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM information_schema.processlist WHERE user = 'root' AND db = 'app'"))[0][0]?.['n']);
  expect(await servedBy()).toBe(db.replicas[0]!.serverId);
  expect((await edge.backend('replica')).pool?.['total']).toBeGreaterThan(0);
  expect(await pooledOnReplica()).toBeGreaterThan(0);
  edge.bgdAction({ action: 'drain-backend', backend: 'replica', deadlineMs: 5000 });
  await edge.waitForBackend('replica', (b) => b.draining === true && b.pool?.['total'] === 0, 'replica pool retired');
  await waitFor(async () => (await pooledOnReplica()) === 0, { timeoutMs: 2000, description: 'the replica to see the pooled connections close' });
  expect(await servedBy()).toBe(db.primary.serverId);
  await edge.waitForBackend('replica', (b) => b.draining === false, 'the drain deadline to pass');
  expect(await servedBy()).toBe(db.replicas[0]!.serverId);
  await ro.end();
});

it('applies a new configuration epoch to new sessions while a pinned transaction keeps its epoch and backend', async () => {
  const pinned = await edge.connect({ database: 'app', multipleStatements: true });
  await pinned.query('BEGIN');
  const [[before]] = await pinned.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  await applyMysqlSetting(edge, 'multi_statements', 'primary');
  await expect(pinned.query('SELECT 1; SELECT 2')).rejects.toMatchObject({ errno: 1235 });
  const [[after]] = await pinned.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  expect(after?.['id']).toBe(before?.['id']);
  await pinned.query('COMMIT');
  const fresh = await edge.connect({ database: 'app', multipleStatements: true });
  const [results] = await fresh.query<RowDataPacket[][]>('SELECT 1 AS a; SELECT 2 AS b');
  expect(results).toEqual([[{ a: 1 }], [{ b: 2 }]]);
  // the formerly pinned session takes the new epoch once its transaction ended
  const [again] = await pinned.query<RowDataPacket[][]>('SELECT 3 AS c; SELECT 4 AS d');
  expect(again).toEqual([[{ c: 3 }], [{ d: 4 }]]);
  await fresh.end();
  await pinned.end();
});
