// Smoke: query, execute, transactions through the edge against a real primary + replica.
import { startMariaDb } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  edge = await startEdge([
    { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'reserved_pool = 2' },
    { name: 'replica', host: db.replicas[0]!.host, port: db.replicas[0]!.port, role: 'replica' },
  ]);
});
afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

it('serves queries', async () => {
  const c = await edge.connect();
  const [rows] = await c.query('SELECT 1 + 1 AS two');
  expect(rows).toEqual([{ two: 2 }]);
  await c.query('CREATE DATABASE IF NOT EXISTS t1');
  await c.query('CREATE TABLE IF NOT EXISTS t1.x (id INT PRIMARY KEY, v VARCHAR(20))');
  await c.query('INSERT INTO t1.x VALUES (1, ?)', ['a']);
  const [r2] = await c.execute('SELECT v FROM t1.x WHERE id = ?', [1]);
  expect(r2).toEqual([{ v: 'a' }]);
  await c.beginTransaction();
  await c.query('INSERT INTO t1.x VALUES (2, ?)', ['b']);
  const [r3] = await c.query('SELECT COUNT(*) AS n FROM t1.x');
  expect(r3).toEqual([{ n: 2 }]);
  await c.rollback();
  await c.end();
  console.log(await edge.metrics());
});
