// Prepared statements and the commands the edge serves, through mysql2 and a byte-level client:
// lazy backend prepares shared per connection, COM_STMT_CLOSE releasing backend statements,
// limits, long data, cursors, routing by the template bound with typed parameters, and every
// other command answered (never a hang).
import { Capability, ColumnType, Command, CursorType, PacketWriter, encodeStmtExecute } from '@dbproxy/protocol-mysql';
import { startMariaDb, waitFor } from '@dbproxy/testing';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { closeDirect, openDirect, startEdge, type DirectConnections, type EdgeHarness } from './harness';
import { RawClient } from './raw-client';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: DirectConnections;

async function preparedCount(c: Connection): Promise<number> {
  const [[row]] = await c.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'");
  return Number(row?.['Value']);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  const replica = db.replicas[0]!;
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' },
      { name: 'replica', host: replica.host, port: replica.port, role: 'replica' },
    ],
    'max_prepared_statements = 8\nread_after_write_seconds = 0',
  );
  direct = await openDirect(db, [
    'CREATE DATABASE app',
    'CREATE TABLE app.kv (k INT PRIMARY KEY, v VARCHAR(64), b MEDIUMBLOB)',
    "INSERT INTO app.kv (k, v) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
  ]);
});

afterAll(async () => {
  await closeDirect(direct);
  await edge?.stop();
  await db?.destroy();
});

describe('prepared statements', () => {
  it('executes statements prepared lazily on whichever pooled connection an execution lands on', async () => {
    const clients = await Promise.all([1, 2, 3].map(() => edge.connect({ database: 'app' })));
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        clients.map(async (c, i) => {
          const k = 1 + ((round + i) % 3);
          const [rows] = await c.execute<RowDataPacket[]>('SELECT v FROM kv WHERE k = ?', [k]);
          expect(rows).toEqual([{ v: 'abc'[k - 1] }]);
        }),
      );
    }
    for (const c of clients) await c.end();
  });

  it('releases backend statements when the client closes them (COM_STMT_CLOSE) or leaves', async () => {
    // statements of earlier tests' clients close as those disconnections reach the edge
    const baseline = await waitFor(async () => ((await preparedCount(direct.replica)) === 0 ? 0 : false));
    const c = await edge.connect({ database: 'app' });
    for (let i = 0; i < 5; i++) await c.execute(`SELECT v, ${i} AS n FROM kv WHERE k = ?`, [1]);
    expect(await preparedCount(direct.replica)).toBeGreaterThanOrEqual(baseline + 5);
    for (let i = 0; i < 5; i++) c.unprepare(`SELECT v, ${i} AS n FROM kv WHERE k = ?`);
    await c.query('SELECT 1');
    expect(await preparedCount(direct.replica)).toBe(baseline);
    await c.execute('SELECT v, 99 AS n FROM kv WHERE k = ?', [1]);
    expect(await preparedCount(direct.replica)).toBe(baseline + 1);
    await c.end();
    await waitFor(async () => (await preparedCount(direct.replica)) === baseline, { description: 'backend statements closed after the client left' });
  });

  it('bounds the statements of a session (ERR 1461) and keeps serving it', async () => {
    const c = await edge.connect({ database: 'app' });
    for (let i = 0; i < 8; i++) await c.prepare(`SELECT ${i} AS n`);
    await expect(c.prepare('SELECT 8 AS n')).rejects.toMatchObject({ errno: 1461, sqlState: '42000' });
    const [[row]] = await c.query<RowDataPacket[]>('SELECT 9 AS n');
    expect(row?.['n']).toBe(9);
    await c.end();
  });

  it('routes by the template bound with the typed parameters (SET autocommit = ?)', async () => {
    const c = await edge.connect({ database: 'app' });
    await c.execute('SET autocommit = ?', ['OFF']);
    await c.execute('INSERT INTO kv (k, v) VALUES (?, ?)', [50, 'fifty']);
    const [[inside]] = await c.execute<RowDataPacket[]>('SELECT COUNT(*) AS n FROM kv WHERE k = ?', [50]);
    expect(inside?.['n']).toBe(1);
    await c.query('ROLLBACK');
    await c.execute('SET autocommit = ?', ['ON']);
    const [[after]] = await direct.primary.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM app.kv WHERE k = 50');
    expect(after?.['n']).toBe(0);
    expect(await edge.metric('dbproxy_mysql_pins_total', { cause: 'autocommit' })).toBeGreaterThanOrEqual(1);
    await c.end();
  });

  it('replays COM_STMT_SEND_LONG_DATA before the execute wherever it lands', async () => {
    const raw = await RawClient.login(edge.rwPort, 'app', 'app-secret', 'app');
    const prepared = await raw.command(Buffer.concat([Buffer.of(Command.StmtPrepare), Buffer.from('UPDATE kv SET b = ? WHERE k = 2')]));
    const id = prepared.summary.prepared?.statementId as number;
    const chunk = Buffer.alloc(70_000, 'z');
    raw.send(Buffer.concat([Buffer.of(Command.StmtSendLongData), u32(id), Buffer.from([0, 0]), chunk]));
    raw.send(Buffer.concat([Buffer.of(Command.StmtSendLongData), u32(id), Buffer.from([0, 0]), chunk]));
    // execute: no NULLs, types bound (BLOB), the value itself came as long data
    const exec = await raw.command(Buffer.concat([Buffer.of(Command.StmtExecute), u32(id), Buffer.from([0, 1, 0, 0, 0, 0, 1, ColumnType.Blob, 0])]));
    expect(exec.summary.err).toBeNull();
    expect(exec.summary.ok?.affectedRows).toBe(1n);
    const [[row]] = await direct.primary.query<RowDataPacket[]>('SELECT LENGTH(b) AS n FROM app.kv WHERE k = 2');
    expect(row?.['n']).toBe(140_000);
    raw.end();
  });

  it('serves cursors (COM_STMT_EXECUTE with a cursor, then COM_STMT_FETCH) on a pinned connection', async () => {
    const raw = await RawClient.login(edge.rwPort, 'app', 'app-secret', 'app');
    const prepared = await raw.command(Buffer.concat([Buffer.of(Command.StmtPrepare), Buffer.from('SELECT k FROM kv WHERE k <= ? ORDER BY k')]));
    const id = prepared.summary.prepared?.statementId as number;
    const w = new PacketWriter();
    encodeStmtExecute(w, { statementId: id, flags: CursorType.ReadOnly, params: [3] }, raw.capabilities & ~Capability.QueryAttributes);
    const exec = await raw.command(w.flush().subarray(4));
    expect(exec.summary.err).toBeNull();
    const fetched = await raw.command(Buffer.concat([Buffer.of(Command.StmtFetch), u32(id), u32(10)]));
    expect(fetched.summary.rows).toBe(3);
    expect(await edge.metric('dbproxy_mysql_pins_total', { cause: 'cursor' })).toBeGreaterThanOrEqual(1);
    raw.end();
  });
});

describe('commands', () => {
  it('answers COM_PING, COM_FIELD_LIST, COM_STATISTICS, COM_SET_OPTION and refuses the rest with ERR 1047', async () => {
    const raw = await RawClient.login(edge.rwPort, 'app', 'app-secret', 'app');
    expect((await raw.command(Buffer.of(Command.Ping))).summary.ok).not.toBeNull();
    const fields = await raw.command(Buffer.concat([Buffer.of(Command.FieldList), Buffer.from('kv\0')]));
    expect(fields.summary.columns.map((c) => c.name)).toEqual(['k', 'v', 'b']);
    const stats = await raw.command(Buffer.of(Command.Statistics));
    expect(stats.packets[0]?.payload.toString()).toMatch(/Uptime/);
    raw.send(Buffer.from([Command.SetOption, 1, 0]));
    expect((await raw.next())?.payload[0]).toBe(0xfe);
    for (const command of [Command.ProcessInfo, Command.Debug, Command.Time, Command.BinlogDump, Command.Sleep]) {
      const err = await raw.error(Buffer.of(command));
      expect(err).toMatchObject({ code: 1047, sqlState: '08S01' });
    }
    expect((await raw.command(Buffer.of(Command.Ping))).summary.ok).not.toBeNull();
    raw.end();
  });

  it('COM_RESET_CONNECTION drops the session state and its prepared statements', async () => {
    const c = await edge.connect({ database: 'app' });
    await c.query('SET @v = 7');
    const statement = await c.prepare('SELECT v FROM kv WHERE k = ?');
    await c.reset();
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @v AS v');
    expect(row?.['v']).toBeNull();
    await expect(statement.execute([1])).rejects.toMatchObject({ errno: 1243 });
    await c.end();
  });

  it('COM_CHANGE_USER authenticates the new account (native) and resets the session', async () => {
    const c = await edge.connect({ database: 'app' });
    await c.query('SET @v = 1');
    await c.changeUser({ user: 'native', password: 'native-secret', database: 'app' });
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @v AS v, DATABASE() AS db');
    expect(row).toEqual({ v: null, db: 'app' });
    await expect(c.changeUser({ user: 'native', password: 'wrong' })).rejects.toMatchObject({ errno: 1045 });
    c.destroy();
  });
});
