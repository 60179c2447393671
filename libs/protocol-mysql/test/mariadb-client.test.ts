// The codec's client side against the real MariaDB on 127.0.0.1:3306: handshake with
// mysql_native_password, text and binary results, prepared statements, the response tracker.
import { randomBytes } from 'node:crypto';
import { createConnection, type Connection } from 'mysql2/promise';
import { Capability, ColumnType, Command, DEFAULT_CLIENT_CAPABILITIES, PacketWriter, ServerStatus, type MysqlValue, type TypedParameter } from '../src';
import { WireClient } from './wire-client';

const PORT = 3306;
const suffix = randomBytes(4).toString('hex');
const DB = `dbp_pm_${suffix}`;
const USER = `dbp_pm_${suffix}`;
const PASSWORD = `pw-${suffix}-ü`;
const CAPS = DEFAULT_CLIENT_CAPABILITIES | Capability.LocalFiles | Capability.MultiStatements;

let root: Connection;
const clients: WireClient[] = [];

async function login(password = PASSWORD, database: string | null = DB): Promise<WireClient> {
  const client = await WireClient.open(PORT);
  clients.push(client);
  const step = await client.login({ username: USER, password, database, capabilities: CAPS });
  if (step.kind !== 'done') throw new Error(`login failed: ${JSON.stringify(step)}`);
  return client;
}

beforeAll(async () => {
  root = await createConnection({ host: '127.0.0.1', port: PORT, user: 'root', multipleStatements: true });
  await root.query(`CREATE DATABASE ${DB}`);
  await root.query(`CREATE USER '${USER}'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('${PASSWORD}')`);
  await root.query(`GRANT ALL ON ${DB}.* TO '${USER}'@'127.0.0.1'`);
  await root.query(`CREATE TABLE ${DB}.typed (
    id BIGINT UNSIGNED PRIMARY KEY, small SMALLINT, medium MEDIUMINT, tiny TINYINT UNSIGNED, f FLOAT, d DOUBLE,
    price DECIMAL(12,2), name VARCHAR(40), code CHAR(3), body BLOB, note TEXT, born DATE, at DATETIME(6),
    ts TIMESTAMP NULL, took TIME, y YEAR, bits BIT(8), doc JSON, shape GEOMETRY NULL, e ENUM('red','blue'), maybe INT NULL)`);
  await root.query(`CREATE PROCEDURE ${DB}.two_results() BEGIN SELECT 1 AS a; SELECT 'x' AS b, 2 AS c; END`);
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await root.query(`DROP DATABASE IF EXISTS ${DB}`);
  await root.query(`DROP USER IF EXISTS '${USER}'@'127.0.0.1'`);
  await root.end();
});

describe('client side against MariaDB', () => {
  it('logs in with mysql_native_password and runs SELECT 1 over the text protocol', async () => {
    const client = await login();
    expect(client.greeting?.authPlugin).toBe('mysql_native_password');
    expect(client.greeting?.serverVersion).toMatch(/MariaDB/);
    const res = await client.query('SELECT 1 AS one, NULL AS nothing, "é" AS word');
    // MariaDB negotiates CLIENT_DEPRECATE_EOF: no EOF after the column definitions.
    expect(client.capabilities & Capability.DeprecateEof).toBe(Capability.DeprecateEof);
    expect(res.roles).toEqual(['column-count', 'column', 'column', 'column', 'row', 'result-end']);
    expect(res.summary.columns.map((c) => c.name)).toEqual(['one', 'nothing', 'word']);
    expect(res.rows).toEqual([[1, null, 'é']]);
    expect(res.summary.statusFlags & ServerStatus.Autocommit).toBe(ServerStatus.Autocommit);
  });

  it('gets ERR 1045 for a wrong password', async () => {
    const client = await WireClient.open(PORT);
    clients.push(client);
    const step = await client.login({ username: USER, password: 'wrong', capabilities: CAPS });
    expect(step).toMatchObject({ kind: 'failed', err: { code: 1045, sqlState: '28000' } });
  });

  it('binds every kind of binary parameter, then reads them back as binary and text rows', async () => {
    const client = await login();
    const insert = await client.prepare(`INSERT INTO typed VALUES (${Array(21).fill('?').join(',')})`);
    expect(insert.summary.prepared).toMatchObject({ paramCount: 21, columnCount: 0 });
    const stmtId = insert.summary.prepared?.statementId as number;
    const params: TypedParameter[] = [
      { type: ColumnType.LongLong, unsigned: true, value: 18446744073709551615n },
      { type: ColumnType.Short, unsigned: false, value: -12345 },
      { type: ColumnType.Long, unsigned: false, value: -8388608 },
      { type: ColumnType.Tiny, unsigned: true, value: 250 },
      { type: ColumnType.Float, unsigned: false, value: 1.5 },
      { type: ColumnType.Double, unsigned: false, value: -2.25 },
      { type: ColumnType.NewDecimal, unsigned: false, value: '1234567890.12' },
      { type: ColumnType.VarString, unsigned: false, value: 'Zoë' },
      { type: ColumnType.String, unsigned: false, value: 'abc' },
      { type: ColumnType.Blob, unsigned: false, value: Buffer.from([0, 1, 2, 0xff]) },
      { type: ColumnType.VarChar, unsigned: false, value: 'long text ✓' },
      { type: ColumnType.Date, unsigned: false, value: { kind: 'date', year: 2024, month: 2, day: 29 } },
      { type: ColumnType.DateTime, unsigned: false, value: { kind: 'datetime', year: 2024, month: 2, day: 29, hour: 13, minute: 14, second: 15, microsecond: 123456 } },
      { type: ColumnType.Timestamp, unsigned: false, value: { kind: 'datetime', year: 2021, month: 6, day: 1, hour: 8, minute: 0, second: 0, microsecond: 0 } },
      { type: ColumnType.Time, unsigned: false, value: { kind: 'time', negative: true, days: 1, hours: 2, minutes: 3, seconds: 4, microseconds: 0 } },
      { type: ColumnType.Short, unsigned: true, value: 2155 },
      { type: ColumnType.Blob, unsigned: false, value: Buffer.from([0xa5]) },
      { type: ColumnType.VarString, unsigned: false, value: '{"k": [1, 2]}' },
      { type: ColumnType.Null, unsigned: false, value: null },
      { type: ColumnType.Enum, unsigned: false, value: 'blue' },
      { type: ColumnType.Long, unsigned: false, value: null },
    ];
    const inserted = await client.execute(stmtId, params);
    expect(inserted.summary.err).toBeNull();
    expect(inserted.roles).toEqual(['ok']);
    expect(inserted.summary.ok?.affectedRows).toBe(1n);

    const select = await client.prepare('SELECT * FROM typed WHERE id = ? AND name = ?');
    const selectId = select.summary.prepared?.statementId as number;
    expect(select.summary.params).toHaveLength(2);
    const binary = await client.execute(selectId, [18446744073709551615n, 'Zoë']);
    const expected: MysqlValue[] = [
      18446744073709551615n,
      -12345,
      -8388608,
      250,
      1.5,
      -2.25,
      '1234567890.12',
      'Zoë',
      'abc',
      Buffer.from([0, 1, 2, 0xff]),
      'long text ✓',
      { kind: 'date', year: 2024, month: 2, day: 29 },
      { kind: 'datetime', year: 2024, month: 2, day: 29, hour: 13, minute: 14, second: 15, microsecond: 123456 },
      { kind: 'datetime', year: 2021, month: 6, day: 1, hour: 8, minute: 0, second: 0, microsecond: 0 },
      { kind: 'time', negative: true, days: 1, hours: 2, minutes: 3, seconds: 4, microseconds: 0 },
      2155,
      Buffer.from([0xa5]),
      '{"k": [1, 2]}',
      null,
      'blue',
      null,
    ];
    expect(binary.rows).toEqual([expected]);
    const text = await client.query('SELECT * FROM typed');
    expect(text.rows).toEqual([expected]);
    expect((await client.close(selectId)).roles).toEqual([]);
  });

  it('shows why INT24 is refused as a parameter type: MariaDB binds NULL and reads no bytes', async () => {
    const client = await login();
    const prepared = await client.prepare('SELECT ? AS first, ? AS second');
    const id = prepared.summary.prepared?.statementId as number;
    // Built by hand since the codec refuses to encode it: INT24 7, then LONG 777.
    const w = new PacketWriter();
    w.begin(0).u8(Command.StmtExecute).u32(id).u8(0).u32(1).u8(0).u8(1).u8(ColumnType.Int24).u8(0).u8(ColumnType.Long).u8(0).u32(7).u32(777);
    w.end();
    const res = await client.sendRaw(Command.StmtExecute, w.flush(), true);
    expect(res.rows).toEqual([[null, 7]]);
  });

  it('binds bare JS values with inferred types', async () => {
    const client = await login();
    const prepared = await client.prepare('SELECT ? + 1 AS n, CONCAT(?, "!") AS s, ? IS NULL AS isnull, LENGTH(?) AS len');
    const res = await client.execute(prepared.summary.prepared?.statementId as number, [41, 'hey', null, Buffer.from('four')]);
    expect(res.rows).toEqual([[42n, 'hey!', 1, 4]]);
  });

  it('tracks multi-results of a CALL, with MORE_RESULTS_EXISTS until the final OK', async () => {
    const client = await login();
    const res = await client.query('CALL two_results()');
    expect(res.summary.resultSets).toBe(2);
    expect(res.rows).toEqual([[1], ['x', 2]]);
    expect(res.roles.filter((r) => r === 'row')).toHaveLength(2);
    expect(res.roles[res.roles.length - 1]).toBe('ok');
    expect(res.summary.statusFlags & ServerStatus.MoreResultsExists).toBe(0);
  });

  it('decodes session-state changes from OK packets', async () => {
    const client = await login();
    const use = await client.query('USE information_schema');
    expect(use.summary.sessionState).toContainEqual({ type: 'schema', schema: 'information_schema' });
    const set = await client.query('SET autocommit = 0');
    expect(set.summary.sessionState).toContainEqual({ type: 'system-variable', name: 'autocommit', value: 'OFF' });
    const init = await client.initDb(DB);
    expect(init.summary.sessionState).toContainEqual({ type: 'schema', schema: DB });
  });

  it('reports a LOCAL INFILE request so it can be refused with an empty packet', async () => {
    const client = await login();
    const res = await client.query(`LOAD DATA LOCAL INFILE '/nonexistent/dbproxy' INTO TABLE typed`);
    expect(res.roles[0]).toBe('local-infile');
    expect(res.summary.localInfile).toBe('/nonexistent/dbproxy');
    expect(['ok', 'err']).toContain(res.roles[1]);
  });

  it('tracks the responses of COM_PING, COM_STATISTICS, COM_FIELD_LIST and COM_RESET_CONNECTION', async () => {
    const client = await login();
    expect((await client.simple(Command.Ping)).roles).toEqual(['ok']);
    expect((await client.simple(Command.Statistics)).roles).toEqual(['statistics']);
    const fields = await client.fieldList('typed');
    expect(fields.summary.columns.map((c) => c.name).slice(0, 3)).toEqual(['id', 'small', 'medium']);
    expect(fields.roles[fields.roles.length - 1]).toBe('result-end');
    expect((await client.simple(Command.ResetConnection)).roles).toEqual(['ok']);
  });

  it('turns a syntax error into an ERR with SQLSTATE', async () => {
    const client = await login();
    const res = await client.query('SELEKT 1');
    expect(res.roles).toEqual(['err']);
    expect(res.summary.err).toMatchObject({ code: 1064, sqlState: '42000' });
  });
});
