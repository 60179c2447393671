// Clients that take turns on one pooled backend connection (pool_max = 1) against real MariaDB:
// nothing one client's statements leave on the connection reaches the next client (its database,
// LAST_INSERT_ID), and prepared statements run as their own client prepared them (in its
// database, in its character set's bytes), whoever prepared the same text on the connection first.
import { startMariaDb } from '@dbproxy/testing';
import { createConnection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  edge = await startEdge(
    [{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'pool_max = 1' }],
    // two statements per backend connection: a third one prepared there evicts the oldest
    'read_after_write_seconds = 0\nmax_prepared_statements = 2',
  );
  const root = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  for (const name of ['db1', 'db2']) {
    await root.query(`CREATE DATABASE ${name}`);
    await root.query(`CREATE TABLE ${name}.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))`);
    await root.query(`INSERT INTO ${name}.t (v) VALUES (?)`, [name === 'db1' ? 'one' : 'two']);
  }
  await root.end();
});

afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

it('runs a prepared statement in the database its client prepared it in, though another client prepared the same text in another', async () => {
  const a = await edge.connect({ database: 'db1' });
  const b = await edge.connect({ database: 'db2' });
  const sql = 'SELECT v FROM t WHERE id = ?';
  expect((await a.execute<RowDataPacket[]>(sql, [1]))[0]).toEqual([{ v: 'one' }]);
  expect((await b.execute<RowDataPacket[]>(sql, [1]))[0]).toEqual([{ v: 'two' }]);
  expect((await a.execute<RowDataPacket[]>(sql, [1]))[0]).toEqual([{ v: 'one' }]);
  await a.end();
  await b.end();
});

it('never runs a client without a default database in the database the client before it selected (information_schema instead, as ProxySQL)', async () => {
  const a = await edge.connect({ database: 'db1' });
  await a.query('SELECT 1');
  await a.end();
  const b = await edge.connect();
  const [[row]] = await b.query<RowDataPacket[]>('SELECT DATABASE() AS d');
  expect(row?.['d']).toBe('information_schema');
  await expect(b.query('SELECT v FROM t')).rejects.toMatchObject({ sqlState: '42S02' });
  // selecting one works, and the connection is usable by clients with a database again
  await b.query('USE db2');
  expect((await b.query<RowDataPacket[]>('SELECT v FROM t WHERE id = 1'))[0]).toEqual([{ v: 'two' }]);
  await b.end();
  const c = await edge.connect({ database: 'db1' });
  expect((await c.query<RowDataPacket[]>('SELECT v FROM t WHERE id = 1'))[0]).toEqual([{ v: 'one' }]);
  await c.end();
});

it('never shows a client the LAST_INSERT_ID of the client before it on the same backend connection', async () => {
  const a = await edge.connect({ database: 'db1' });
  const [inserted] = await a.query<ResultSetHeader>("INSERT INTO t (v) VALUES ('x')");
  expect(inserted.insertId).toBeGreaterThan(1);
  await a.query('SELECT LAST_INSERT_ID(4242)');
  const [[threadA]] = await a.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  await a.end();
  const b = await edge.connect({ database: 'db1' });
  const [[row]] = await b.query<RowDataPacket[]>('SELECT LAST_INSERT_ID() AS id, CONNECTION_ID() AS thread');
  expect(row?.['thread']).toBe(threadA?.['id']); // the same backend connection
  expect(row?.['id']).toBe(0);
  await b.end();
});

it('prepares a statement again elsewhere in the bytes its latin1 client sent, not re-encoded', async () => {
  const a = await edge.connect({ database: 'db1', charset: 'LATIN1_SWEDISH_CI' });
  const sql = "SELECT HEX('\u00e9') AS h, ? AS p";
  expect((await a.execute<RowDataPacket[]>(sql, [1]))[0]).toEqual([{ h: 'E9', p: 1 }]);
  // another client's two statements evict it from the only backend connection
  const b = await edge.connect({ database: 'db1' });
  await b.execute('SELECT 1 + ? AS x', [1]);
  await b.execute('SELECT 2 + ? AS x', [1]);
  expect((await a.execute<RowDataPacket[]>(sql, [2]))[0]).toEqual([{ h: 'E9', p: 2 }]);
  await a.end();
  await b.end();
});

it('holds pool_max backend connections in all, whatever client capability profiles share the backend', async () => {
  const a = await edge.connect({ database: 'db1' });
  const b = await edge.connect({ database: 'db1', flags: ['-FOUND_ROWS'] }); // another profile: its own pool
  const monitor = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  try {
    let most = 0;
    const watching = (async () => {
      for (let i = 0; i < 20; i++) {
        const [rows] = await monitor.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = 'db1'");
        most = Math.max(most, Number(rows[0]?.['n']));
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const started = Date.now();
    const [[ra], [rb]] = await Promise.all([a.query<RowDataPacket[]>('SELECT SLEEP(0.2) AS s, 1 AS who'), b.query<RowDataPacket[]>('SELECT SLEEP(0.2) AS s, 2 AS who')]);
    expect([ra[0]?.['who'], rb[0]?.['who']]).toEqual([1, 2]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390); // one connection: the two sleeps ran one after the other
    await watching;
    expect(most).toBe(1);
  } finally {
    await monitor.end();
    await a.end();
    await b.end();
  }
});

it('moves clients without a database off the one another client left without closing pooled connections', async () => {
  const monitor = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  const connections = async () => Number((await monitor.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Connections'"))[0][0]?.['Value']);
  try {
    const warm = await edge.connect({ database: 'db1' }); // the pool's one connection, for this client profile
    await warm.query('SELECT 1');
    await warm.end();
    const before = await connections();
    for (let round = 0; round < 5; round++) {
      const withDb = await edge.connect({ database: 'db1' });
      expect((await withDb.query<RowDataPacket[]>('SELECT v FROM t WHERE id = 1'))[0]).toEqual([{ v: 'one' }]);
      await withDb.end();
      const without = await edge.connect();
      expect((await without.query<RowDataPacket[]>('SELECT 1 AS one'))[0]).toEqual([{ one: 1 }]);
      await without.end();
    }
    expect((await connections()) - before).toBe(0); // the one pooled connection served every client
  } finally {
    await monitor.end();
  }
});
