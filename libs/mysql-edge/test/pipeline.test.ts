// pipeline_depth > 1 through mysql-edge against a real MariaDB primary (reads fall back to it, so
// reads, writes and transactions contend for one pool): when every pooled connection is lent,
// autocommit reads are written behind other sessions' reads on one of them. Each client must get
// exactly its own answers (text and prepared, across schemas); writes and transactions never
// share; a timeout, a client leaving or a KILL touches only the sessions on that connection.
import { startMariaDb, waitFor } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: Connection;
const POOL = 2;

const pipelined = () => edge.metric('dbproxy_mysql_pipelined_queries_total');
const connectMany = (n: number, database = 'app') => Promise.all(Array.from({ length: n }, () => edge.connect({ database })));
const endAll = (clients: Connection[]) => Promise.all(clients.map((c) => c.end()));
const valueOf = async (c: Connection, sql: string, params?: (string | number)[]): Promise<unknown> => {
  const [rows] = params ? await c.execute<RowDataPacket[]>(sql, params) : await c.query<RowDataPacket[]>(sql);
  return rows[0]?.['n'];
};
/** Settles to the value or the error's errno. */
const outcome = (p: Promise<unknown>): Promise<unknown> => p.then((v) => v, (err: { errno?: number }) => `errno ${err.errno}`);

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  edge = await startEdge(
    [{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'reserved_pool = 1' }],
    `pool_max_per_backend = ${POOL}
pool_acquire_timeout_seconds = 20
pipeline_depth = 4
query_timeout_seconds = 2
read_after_write_seconds = 0`,
  );
  direct = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  for (const sql of [
    'CREATE DATABASE app',
    'CREATE DATABASE app2',
    'CREATE TABLE app.log (client INT, seq INT, PRIMARY KEY (client, seq))',
    'CREATE TABLE app.nums (id INT PRIMARY KEY, n INT)',
    'INSERT INTO app.nums SELECT seq, seq * 7 FROM app.seq_1_to_2000',
  ])
    await direct.query(sql);
});

afterAll(async () => {
  await direct?.end();
  await edge?.stop();
  await db?.destroy();
});

it('gives 40 clients over a pool of 2 exactly their own answers, text and prepared, with writes in between', async () => {
  const before = await pipelined();
  const clients = await connectMany(40);
  const mismatches: string[] = [];
  await Promise.all(
    clients.map(async (c, id) => {
      for (let seq = 0; seq < 30; seq++) {
        if (id % 10 === 0 && seq % 5 === 0) {
          await c.execute('INSERT INTO log VALUES (?, ?)', [id, seq]);
          continue;
        }
        const key = 1 + ((id * 31 + seq) % 2000);
        const got = seq % 3 === 0 ? await valueOf(c, `SELECT n FROM nums WHERE id = ${key}`) : await valueOf(c, 'SELECT n FROM nums WHERE id = ?', [key]);
        if (got !== key * 7) mismatches.push(`client ${id} read id ${key}: ${String(got)}`);
      }
    }),
  );
  await endAll(clients);
  expect(mismatches).toEqual([]);
  expect(await pipelined()).toBeGreaterThan(before);
  const [[written]] = await direct.query<RowDataPacket[]>('SELECT count(*) AS n FROM app.log');
  expect(Number(written?.['n'])).toBe(4 * 6);
});

it('never shares a connection between sessions of different schemas: each reads its own', async () => {
  const before = await pipelined();
  const clients = [...(await connectMany(6, 'app')), ...(await connectMany(6, 'app2'))];
  const wrong: string[] = [];
  await Promise.all(
    clients.map(async (c, i) => {
      const want = i < 6 ? 'app' : 'app2';
      for (let k = 0; k < 15; k++) {
        const [rows] = await c.query<RowDataPacket[]>('SELECT DATABASE() AS d, SLEEP(0.005) AS s');
        if (rows[0]?.['d'] !== want) wrong.push(`${want} session read ${String(rows[0]?.['d'])}`);
      }
    }),
  );
  await endAll(clients);
  expect(wrong).toEqual([]);
  expect(await pipelined()).toBeGreaterThan(before);
});

it('times out only the statements past query_timeout_seconds (ERR 1969) and serves those sessions again', async () => {
  const slow = await connectMany(POOL);
  const queued = await edge.connect({ database: 'app' });
  const before = await pipelined();
  const running = slow.map((c) => outcome(valueOf(c, 'SELECT SLEEP(30) AS n')));
  await waitFor(async () => {
    const [rows] = await direct.query<RowDataPacket[]>("SELECT count(*) AS n FROM information_schema.processlist WHERE info = 'SELECT SLEEP(30) AS n'");
    return Number(rows[0]?.['n']) === POOL;
  }, { description: 'both pooled connections running a sleep' });
  const behind = outcome(valueOf(queued, 'SELECT 4 AS n'));
  expect(await Promise.all([...running, behind])).toEqual(['errno 1969', 'errno 1969', 'errno 1969']);
  expect(await pipelined()).toBe(before + 1);
  expect(await Promise.all([...slow, queued].map((c) => valueOf(c, 'SELECT 5 AS n')))).toEqual([5, 5, 5]);
  await endAll([...slow, queued]);
});

it('drops the answers of a client that left while queued; the clients around it are served', async () => {
  const slow = await connectMany(POOL);
  const leaving = await edge.connect({ database: 'app' });
  const after = await edge.connect({ database: 'app' });
  leaving.on('error', () => undefined);
  const before = await pipelined();
  const running = slow.map((c, i) => valueOf(c, `SELECT ${10 + i} AS n, SLEEP(0.6) AS s`));
  await new Promise((r) => setTimeout(r, 150));
  void leaving.query('SELECT 99 AS n, SLEEP(0.2) AS s').catch(() => undefined);
  await waitFor(async () => (await pipelined()) > before, { timeoutMs: 2000, description: 'the leaving client queued' });
  leaving.destroy();
  const next = valueOf(after, 'SELECT 7 AS n');
  expect(await Promise.all(running)).toEqual([10, 11]);
  expect(await next).toBe(7);
  expect(await Promise.all(slow.map((c) => valueOf(c, 'SELECT 8 AS n')))).toEqual([8, 8]);
  await endAll([...slow, after]);
});

it('a KILLed shared connection gives each session on it an ERR, and their next statements succeed', async () => {
  const clients = await connectMany(POOL + 2);
  const before = await pipelined();
  const running = clients.map((c, i) => outcome(valueOf(c, `SELECT ${20 + i} AS n, SLEEP(${i < POOL ? 1.5 : 0.1}) AS s`)));
  await waitFor(async () => (await pipelined()) === before + 2, { timeoutMs: 2000, description: 'two reads queued' });
  const [rows] = await direct.query<RowDataPacket[]>("SELECT id FROM information_schema.processlist WHERE info LIKE 'SELECT 20 AS n%'");
  await direct.query(`KILL ${Number(rows[0]?.['id'])}`);
  const results = await Promise.all(running);
  // the killed connection's sessions get ER_NET_READ_ERROR; the other lending is untouched
  expect(results.filter((r) => r === 'errno 1158')).toHaveLength(2);
  expect(results[1]).toBe(21);
  expect(await Promise.all(clients.map((c) => valueOf(c, 'SELECT 9 AS n')))).toEqual([9, 9, 9, 9]);
  await endAll(clients);
});

it('never queues writes or transactions: a transaction keeps one connection and sees its own write', async () => {
  const readers = await connectMany(6);
  const tx = await edge.connect({ database: 'app' });
  const before = await pipelined();
  const reads = readers.map((c) => valueOf(c, 'SELECT 1 AS n, SLEEP(0.4) AS s'));
  await waitFor(async () => (await pipelined()) === before + 4, { timeoutMs: 2000, description: 'four readers queued' });
  await tx.query('START TRANSACTION');
  const id = await valueOf(tx, 'SELECT CONNECTION_ID() AS n');
  await tx.execute('INSERT INTO log VALUES (?, ?)', [999, 1]);
  expect(await valueOf(tx, 'SELECT count(*) AS n FROM log WHERE client = 999')).toBe(1);
  expect(await valueOf(tx, 'SELECT CONNECTION_ID() AS n')).toBe(id);
  await tx.query('ROLLBACK');
  expect(await pipelined()).toBe(before + 4);
  expect(await Promise.all(reads)).toEqual([1, 1, 1, 1, 1, 1]);
  await endAll([...readers, tx]);
});

it('lets a write waiting for a connection through while reads keep joining: each lending takes at most pipeline_depth reads', async () => {
  const readers = await connectMany(8);
  const writer = await edge.connect({ database: 'app' });
  let reading = true;
  const loops = readers.map(async (c) => {
    let n = 0;
    while (reading) {
      await valueOf(c, 'SELECT 1 AS n, SLEEP(0.02) AS s');
      n++;
    }
    return n;
  });
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  await writer.execute('INSERT INTO log VALUES (?, ?)', [777, 1]);
  const waited = Date.now() - started;
  reading = false;
  const reads = await Promise.all(loops);
  expect(waited).toBeLessThan(1000); // a few lendings' worth of 20 ms reads, not until the readers stop
  for (const n of reads) expect(n).toBeGreaterThan(0);
  await endAll([...readers, writer]);
});
