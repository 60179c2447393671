// The default pipeline_depth ("auto") through mysql-edge against a real MariaDB primary: autocommit
// reads are pipelined on lent connections only while sessions wait for the pool, at a depth
// following the waiters (min(16, 1 + ceil(waiters / pool size))). Many clients over a pool of 2:
// pipelining happens and each gets its own answers; one client alone pipelines nothing; a failing
// statement among other clients' reads fails only its own client.
import { startMariaDb } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: Connection;
const POOL = 2;

const pipelined = () => edge.metric('dbproxy_mysql_pipelined_queries_total');
const connectMany = (n: number) => Promise.all(Array.from({ length: n }, () => edge.connect({ database: 'app' })));
const valueOf = async (c: Connection, sql: string, params?: number[]): Promise<unknown> => {
  const [rows] = params ? await c.execute<RowDataPacket[]>(sql, params) : await c.query<RowDataPacket[]>(sql);
  return rows[0]?.['n'];
};

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  // no pipeline_depth here: the shipped default ("auto") is under test
  edge = await startEdge(
    [{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' }],
    `pool_max_per_backend = ${POOL}
pool_acquire_timeout_seconds = 20
read_after_write_seconds = 0`,
  );
  direct = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  for (const sql of ['CREATE DATABASE app', 'CREATE TABLE app.nums (id INT PRIMARY KEY, n INT)', 'INSERT INTO app.nums SELECT seq, seq * 7 FROM app.seq_1_to_2000'])
    await direct.query(sql);
});

afterAll(async () => {
  await direct?.end();
  await edge?.stop();
  await db?.destroy();
});

it('pipelines reads of 40 clients over a pool of 2, each client getting exactly its own answers', async () => {
  const before = await pipelined();
  const clients = await connectMany(40);
  const mismatches: string[] = [];
  await Promise.all(
    clients.map(async (c, id) => {
      for (let seq = 0; seq < 30; seq++) {
        const key = 1 + ((id * 31 + seq) % 2000);
        const got = seq % 3 === 0 ? await valueOf(c, `SELECT n FROM nums WHERE id = ${key}`) : await valueOf(c, 'SELECT n FROM nums WHERE id = ?', [key]);
        if (got !== key * 7) mismatches.push(`client ${id} read id ${key}: ${String(got)}`);
      }
    }),
  );
  await Promise.all(clients.map((c) => c.end()));
  expect(mismatches).toEqual([]);
  expect(await pipelined()).toBeGreaterThan(before);
});

it('pipelines nothing for a single client', async () => {
  const before = await pipelined();
  const [c] = await connectMany(1);
  for (let key = 1; key <= 100; key++) expect(await valueOf(c as Connection, 'SELECT n FROM nums WHERE id = ?', [key])).toBe(key * 7);
  await (c as Connection).end();
  expect(await pipelined()).toBe(before);
});

it('sends a failing statement queued among other clients\' reads to its own client only', async () => {
  const before = await pipelined();
  const clients = await connectMany(30);
  const wrong: string[] = [];
  let failures = 0;
  await Promise.all(
    clients.map(async (c, id) => {
      for (let seq = 0; seq < 24; seq++) {
        const key = 1 + ((id * 17 + seq) % 2000);
        if (id % 3 === 0 && seq % 4 === 1) {
          const err = await c.query(`SELECT no_such_column AS n FROM nums WHERE id = ${key}`).then(
            () => undefined,
            (e: { errno?: number }) => e,
          );
          if (err?.errno === 1054) failures++;
          else wrong.push(`client ${id} seq ${seq}: expected errno 1054, got ${err?.errno ?? 'a result'}`);
          continue;
        }
        const got = await valueOf(c, 'SELECT n FROM nums WHERE id = ?', [key]);
        if (got !== key * 7) wrong.push(`client ${id} read id ${key}: ${String(got)}`);
      }
    }),
  );
  await Promise.all(clients.map((c) => c.end()));
  expect(wrong).toEqual([]);
  expect(failures).toBe(10 * 6);
  expect(await pipelined()).toBeGreaterThan(before);
});
