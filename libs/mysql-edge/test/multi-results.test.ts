// Result shapes of multi-statement requests and CALL through mysql-edge with mysql2
// (multipleStatements: true) against real MariaDB: CALL of a procedure returning result sets in
// the default "reject" mode, then with multi_statements = "primary" several result sets, OK and
// result sets mixed, an error in the middle (later statements not run), streaming with the client
// pausing across results, and the pins statements before a failing one leave.
import { createConnection as createCallbackConnection, type RowDataPacket as CallbackRow } from 'mysql2';
import { type Connection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, APP_USER, type EdgeHarness } from './harness';
import { startPrimaryOnly, stopPrimaryOnly, type PrimaryOnly } from './primary-only';

jest.setTimeout(120_000);

let db: PrimaryOnly['db'];
let edge: EdgeHarness;
let root: Connection;

beforeAll(async () => {
  ({ db, edge, root } = await startPrimaryOnly('read_after_write_seconds = 0\npool_max_per_backend = 4', ['CREATE DATABASE app', 'CREATE TABLE app.t (id INT PRIMARY KEY, v INT)', 'CREATE PROCEDURE app.two_sets(n INT) BEGIN SELECT n AS a; SELECT n * 2 AS b, n * 3 AS c; END']));
});

afterAll(() => stopPrimaryOnly({ db, edge, root }));

/** The results of a multi-result query, typed per result (mysql2's types do not mix OK and rows). */
async function results<T extends unknown[]>(conn: Connection, sql: string): Promise<T> {
  const [raw] = await conn.query(sql);
  return raw as unknown as T;
}

async function rowsOf(sql: string): Promise<RowDataPacket[]> {
  const [rows] = await root.query<RowDataPacket[]>(sql);
  return rows;
}

describe('with multi_statements = "reject"', () => {
  it('CALL of a procedure returning two result sets is one statement: both sets and the final OK arrive', async () => {
    const c = await edge.connect({ database: 'app', multipleStatements: true });
    const called = await results<[RowDataPacket[], RowDataPacket[], ResultSetHeader]>(c, 'CALL two_sets(7)');
    expect(called[0]).toEqual([{ a: 7 }]);
    expect(called[1]).toEqual([{ b: 14, c: 21 }]);
    expect(called[2]).toMatchObject({ affectedRows: 0 });
    const [again] = await c.query<RowDataPacket[]>('SELECT 1 AS one');
    expect(again).toEqual([{ one: 1 }]);
    await c.end();
    // also for a client that did not enable multi-statements (CLIENT_MULTI_RESULTS is enough)
    const plain = await edge.connect({ database: 'app' });
    const [plainResults] = await plain.query<RowDataPacket[][]>('CALL two_sets(2)');
    expect(plainResults[1]).toEqual([{ b: 4, c: 6 }]);
    await plain.end();
  });
});

describe('with multi_statements = "primary"', () => {
  let c: Connection;

  beforeAll(async () => {
    await applyMysqlSetting(edge, 'multi_statements', 'primary');
  });

  beforeEach(async () => {
    await root.query('DELETE FROM app.t');
    c = await edge.connect({ database: 'app', multipleStatements: true });
  });

  afterEach(async () => {
    await c.end();
  });

  it('several result sets, and OK packets mixed with result sets, in order', async () => {
    const [sets] = await c.query<RowDataPacket[][]>('SELECT 1 AS a; SELECT 2 AS b, 3 AS c; SELECT 4 AS d FROM DUAL WHERE 0');
    expect(sets).toEqual([[{ a: 1 }], [{ b: 2, c: 3 }], []]);
    const mixed = await results<[ResultSetHeader, RowDataPacket[], ResultSetHeader, RowDataPacket[]]>(
      c,
      'INSERT INTO t VALUES (1, 10), (2, 20); SELECT id, v FROM t ORDER BY id; UPDATE t SET v = v + 1; SELECT SUM(v) AS s FROM t',
    );
    expect(mixed[0]).toMatchObject({ affectedRows: 2 });
    expect(mixed[1]).toEqual([{ id: 1, v: 10 }, { id: 2, v: 20 }]);
    expect(mixed[2]).toMatchObject({ affectedRows: 2, changedRows: 2 });
    expect(mixed[3]).toEqual([{ s: '32' }]);
    const more = await results<[RowDataPacket[], RowDataPacket[], ResultSetHeader, RowDataPacket[]]>(c, 'CALL two_sets(1); SELECT 5 AS e');
    expect(more[0]).toEqual([{ a: 1 }]);
    expect(more[1]).toEqual([{ b: 2, c: 3 }]);
    expect(more[3]).toEqual([{ e: 5 }]);
  });

  it('an error in the middle ends the response: later statements do not run, the session goes on', async () => {
    await expect(c.query('INSERT INTO t VALUES (1, 1); SELECT * FROM missing_table; INSERT INTO t VALUES (2, 2)')).rejects.toMatchObject({ errno: 1146 });
    expect(await rowsOf('SELECT id FROM app.t ORDER BY id')).toEqual([{ id: 1 }]);
    const [after] = await c.query<RowDataPacket[][]>('SELECT 6 AS f; SELECT 7 AS g');
    expect(after).toEqual([[{ f: 6 }], [{ g: 7 }]]);
  });

  it('statements that ran before a failing one keep their pin: a BEGIN stays open, a user variable stays set', async () => {
    await expect(c.query('BEGIN; INSERT INTO t VALUES (3, 3); SELECT * FROM missing_table')).rejects.toMatchObject({ errno: 1146 });
    // another client's work does not see the open transaction's row; this client commits it
    expect(await rowsOf('SELECT id FROM app.t')).toEqual([]);
    await c.query('INSERT INTO t VALUES (4, 4)');
    await c.query('COMMIT');
    expect(await rowsOf('SELECT id FROM app.t ORDER BY id')).toEqual([{ id: 3 }, { id: 4 }]);
    await expect(c.query('SET @kept = 42; SELECT * FROM missing_table')).rejects.toMatchObject({ errno: 1146 });
    const others = await Promise.all([1, 2, 3].map(() => edge.connect({ database: 'app' })));
    await Promise.all(others.map((o) => o.query('SELECT SLEEP(0.1)')));
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @kept AS kept');
    expect(row?.['kept']).toBe(42);
    await Promise.all(others.map((o) => o.end()));
  });

  it('a pin a multi-statement request starts ends as a single statement would: a committed transaction unpins', async () => {
    await c.query('BEGIN; INSERT INTO t VALUES (5, 5)');
    expect(await rowsOf('SELECT id FROM app.t')).toEqual([]);
    const committed = await results<[ResultSetHeader, RowDataPacket[]]>(c, 'COMMIT; SELECT @@in_transaction AS tx');
    expect(committed[1]).toEqual([{ tx: 0 }]);
    expect(await rowsOf('SELECT id FROM app.t')).toEqual([{ id: 5 }]);
  });

  it('streams several large result sets to a client that pauses reading: every row arrives in order', async () => {
    const client = createCallbackConnection({ host: '127.0.0.1', port: edge.rwPort, ...APP_USER, database: 'app', multipleStatements: true });
    // rows of the three sets differ in their columns: set 0 has pad, set 1 one, set 2 only seq
    const counts = [0, 0, 0];
    const order: number[] = [];
    let lastSeq = 0;
    let inOrder = true;
    await new Promise<void>((resolve, reject) => {
      const stream = client.query("SELECT seq, REPEAT('r', 200) AS pad FROM seq_1_to_60000; SELECT 1 AS one; SELECT seq FROM seq_1_to_30000").stream({ highWaterMark: 16 });
      let pauses = 0;
      stream.on('data', (row: CallbackRow) => {
        const set = row['pad'] !== undefined ? 0 : row['one'] !== undefined ? 1 : 2;
        if (order[order.length - 1] !== set) {
          order.push(set);
          lastSeq = 0;
        }
        counts[set] = (counts[set] as number) + 1;
        const seq = Number(row['seq'] ?? 1);
        if (seq !== lastSeq + 1) inOrder = false;
        lastSeq = seq;
        if (seq % 15_000 === 0 && pauses < 5) {
          pauses++;
          stream.pause();
          setTimeout(() => stream.resume(), 400);
        }
      });
      stream.on('error', reject);
      stream.on('end', () => resolve());
    });
    client.end();
    expect(order).toEqual([0, 1, 2]);
    expect(counts).toEqual([60_000, 1, 30_000]);
    expect(inOrder).toBe(true);
  });
});
