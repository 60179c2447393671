// COM_SET_OPTION through mysql-edge against real MariaDB, from a raw client (mysql2 cannot send it):
// MYSQL_OPTION_MULTI_STATEMENTS_ON / _OFF switch the session's multi-statements as on the server
// (PHP's mysqli::multi_query does this), within what mysql.multi_statements allows.
import { Command } from '@dbproxy/protocol-mysql';
import { startMariaDb } from '@dbproxy/testing';
import { RawClient } from './raw-client';
import { APP_USER, applyMysqlSetting, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  edge = await startEdge([{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' }], 'read_after_write_seconds = 0');
});

afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

const ON = 0;
const OFF = 1;

function setOption(option: number): Buffer {
  return Buffer.of(Command.SetOption, option & 0xff, option >> 8);
}

/** Sends COM_SET_OPTION and expects the EOF the server answers. */
async function expectEof(raw: RawClient, option: number): Promise<void> {
  raw.send(setOption(option));
  const reply = await raw.next();
  expect(reply?.payload[0]).toBe(0xfe);
  expect(reply?.sequenceId).toBe(1);
}

it('with multi_statements = "reject", COM_SET_OPTION ON is answered but several statements are still refused (1235)', async () => {
  const raw = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password);
  await expectEof(raw, ON);
  expect(await raw.error(Buffer.from('\x03SELECT 1; SELECT 2'))).toMatchObject({ code: 1235 });
  raw.end();
});

it('with multi_statements = "primary", COM_SET_OPTION ON enables several statements per query and OFF disables them again', async () => {
  await applyMysqlSetting(edge, 'multi_statements', 'primary');
  const raw = await RawClient.login(edge.rwPort, APP_USER.user, APP_USER.password);
  // the raw client did not ask for CLIENT_MULTI_STATEMENTS at login: refused as by the server
  expect(await raw.error(Buffer.from('\x03SELECT 1; SELECT 2'))).toMatchObject({ code: 1064 });
  await expectEof(raw, ON);
  const { summary } = await raw.query('SELECT 1 AS a; SELECT 2 AS b, 3 AS c');
  expect(summary.err).toBeNull();
  expect(summary.resultSets).toBe(2);
  expect(summary.rows).toBe(2);
  await expectEof(raw, OFF);
  expect(await raw.error(Buffer.from('\x03SELECT 1; SELECT 2'))).toMatchObject({ code: 1064 });
  const { summary: one } = await raw.query('SELECT 1');
  expect(one.err).toBeNull();
  // an option the server does not know: 1047, and the session goes on
  expect(await raw.error(setOption(7))).toMatchObject({ code: 1047 });
  const { summary: after } = await raw.query('SELECT 1');
  expect(after.err).toBeNull();
  raw.end();
});
