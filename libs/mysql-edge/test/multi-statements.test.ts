// Multi-statement requests through mysql-edge against real MariaDB: with multi_statements =
// "reject" the server itself refuses a second statement the edge's lexer did not count (backend
// connections do not ask for CLIENT_MULTI_STATEMENTS); with "primary" only clients that asked
// for multi-statements may send them (the pools take connections that ask for them once the
// setting changes).
import { type Connection, type RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, type EdgeHarness } from './harness';
import { startPrimaryOnly, stopPrimaryOnly, type PrimaryOnly } from './primary-only';

jest.setTimeout(120_000);

let db: PrimaryOnly['db'];
let edge: EdgeHarness;
let root: Connection;

beforeAll(async () => {
  ({ db, edge, root } = await startPrimaryOnly('read_after_write_seconds = 0', ['CREATE DATABASE app']));
});

afterAll(() => stopPrimaryOnly({ db, edge, root }));

async function allowMultiStatements(): Promise<void> {
  await applyMysqlSetting(edge, 'multi_statements', 'primary');
}

async function tableExists(name: string): Promise<boolean> {
  const [rows] = await root.query<RowDataPacket[]>('SHOW TABLES FROM app LIKE ?', [name]);
  return rows.length === 1;
}

it('refuses a second statement hidden from the edge by NO_BACKSLASH_ESCAPES: the backend runs none of it', async () => {
  const c = await edge.connect({ database: 'app', multipleStatements: true });
  await c.query("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'");
  // the edge reads one string literal to the end; MariaDB reads 'x\' then a CREATE TABLE
  await expect(c.query("SELECT 'x\\'; CREATE TABLE pwn (a INT); -- '")).rejects.toMatchObject({ errno: 1064 });
  expect(await tableExists('pwn')).toBe(false);
  // what the edge counts is refused by the edge itself
  await expect(c.query('SELECT 1; CREATE TABLE pwn2 (a INT)')).rejects.toMatchObject({ errno: 1235 });
  expect(await tableExists('pwn2')).toBe(false);
  await c.end();
});

it('with multi_statements = "primary", runs several statements for a client that asked, and refuses them (ERR 1064) to one that did not', async () => {
  await allowMultiStatements();
  const asked = await edge.connect({ database: 'app', multipleStatements: true });
  const [results] = await asked.query<RowDataPacket[][]>('SELECT 1 AS a; SELECT 2 AS b');
  expect(results).toEqual([[{ a: 1 }], [{ b: 2 }]]);
  await asked.end();
  const plain = await edge.connect({ database: 'app' });
  await expect(plain.query('SELECT 1; CREATE TABLE pwn3 (a INT)')).rejects.toMatchObject({ errno: 1064, sqlState: '42000' });
  expect(await tableExists('pwn3')).toBe(false);
  await plain.end();
});
