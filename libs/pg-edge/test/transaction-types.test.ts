// Transaction mode's compatibility contract (spec 003): every listed type round-trips exactly as a
// parameter and a result, in text and in binary, through unnamed and named (re-prepared) statements.
import { decodeValue, encodeValue, PgTypeOid, type PgValue } from '@dbproxy/protocol-pg';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';
import { errorOf, RawClient, rowsOf } from './raw-client';

jest.setTimeout(60_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
let client: RawClient;

const SAMPLES: readonly [string, number, readonly PgValue[]][] = [
  ['bool', PgTypeOid.bool, [true, false]],
  ['int2', PgTypeOid.int2, [-32768, 32767, 0]],
  ['int4', PgTypeOid.int4, [-2147483648, 2147483647]],
  ['int8', PgTypeOid.int8, [-9223372036854775808n, 9223372036854775807n]],
  ['float4', PgTypeOid.float4, [3.25, -0.5, Number.POSITIVE_INFINITY]],
  ['float8', PgTypeOid.float8, [0.1, -1e300, Number.NaN]],
  ['text', PgTypeOid.text, ['héllo wörld ✓', '']],
  ['varchar', PgTypeOid.varchar, ['plain']],
  ['bpchar', PgTypeOid.bpchar, ['padded  ']],
  ['name', PgTypeOid.name, ['pg_class']],
  ['bytea', PgTypeOid.bytea, [Buffer.from([0, 1, 0x7f, 0xff]), Buffer.alloc(0)]],
  ['oid', PgTypeOid.oid, [4294967295, 0]],
  ['"char"', PgTypeOid.char, ['x']],
  ['json', PgTypeOid.json, ['{"b": 1, "a": [1, 2.50]}']],
  ['jsonb', PgTypeOid.jsonb, ['{"a": [1, 2.50], "b": {"c": null}}']],
  ['numeric', PgTypeOid.numeric, ['-123.4500', '12345678901234567890.000000001', 'NaN', '0']],
  ['date', PgTypeOid.date, ['2024-02-29', 'infinity', '0044-03-15 BC']],
  ['time', PgTypeOid.time, ['23:59:59.999999', '00:00:00']],
  ['timestamp', PgTypeOid.timestamp, ['2024-02-29 12:34:56.789012', '-infinity']],
  ['timestamptz', PgTypeOid.timestamptz, ['2024-02-29 12:34:56.789012+00']],
];

beforeAll(async () => {
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg);
  edge = await startEdge(
    [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra: `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"` }],
    'routing_mode = "transaction"\npool_max_per_backend = 3\npool_acquire_timeout_seconds = 1',
    '[[users]]\nname = "app"\npassword = "types-secret"',
  );
  client = await RawClient.connect(edge.rwPort);
  const startup = await client.startup({ user: 'app', database: 'postgres', client_encoding: 'UTF8' }, 'types-secret');
  expect(startup.at(-1)).toEqual({ type: 'ReadyForQuery', status: 'I' });
  await client.query("SET TIME ZONE 'UTC'");
});

afterAll(async () => {
  client?.close();
  await edge?.stop();
  await pg?.destroy();
});

describe.each([
  ['text', 0],
  ['binary', 1],
] as const)('%s format', (_name, format) => {
  it.each(SAMPLES)('%s round-trips exactly as a parameter and a result', async (type, oid, values) => {
    for (const value of values) {
      client.send(
        { type: 'Parse', statement: '', sql: `SELECT $1::${type} AS v`, paramTypes: [oid] },
        { type: 'Bind', portal: '', statement: '', paramFormats: [format], params: [encodeValue(oid, format, value)], resultFormats: [format] },
        { type: 'Describe', kind: 'P', name: '' },
        { type: 'Execute', portal: '', maxRows: 0 },
        { type: 'Sync' },
      );
      const messages = await client.untilReady();
      expect(errorOf(messages)).toBeUndefined();
      const description = messages.find((m) => m.type === 'RowDescription');
      expect(description?.type === 'RowDescription' && description.fields[0].typeOid).toBe(oid);
      const [[bytes]] = rowsOf(messages);
      expect(decodeValue(oid, format, bytes as Buffer)).toEqual(value);
    }
  });

  it('keeps formats through a named statement the backend inferred types for', async () => {
    const name = `typed_${format}`;
    client.send({ type: 'Parse', statement: name, sql: 'SELECT $1 + 1 AS n, $2 || \'!\' AS t', paramTypes: [PgTypeOid.int8, 0] }, { type: 'Sync' });
    expect(errorOf(await client.untilReady())).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      client.send(
        { type: 'Bind', portal: '', statement: name, paramFormats: [format], params: [encodeValue(PgTypeOid.int8, format, 41n + BigInt(i)), encodeValue(PgTypeOid.text, format, 'hi')], resultFormats: [format] },
        { type: 'Execute', portal: '', maxRows: 0 },
        { type: 'Sync' },
      );
      const messages = await client.untilReady();
      expect(errorOf(messages)).toBeUndefined();
      const [[n, t]] = rowsOf(messages);
      expect(decodeValue(PgTypeOid.int8, format, n as Buffer)).toBe(42n + BigInt(i));
      expect(decodeValue(PgTypeOid.text, format, t as Buffer)).toBe('hi!');
    }
  });
});

it('answers 53300 when no pooled connection frees up within pool_acquire_timeout_seconds, and recovers', async () => {
  // The session above pinned one of the 3 connections (SET TIME ZONE); these two hold the rest.
  const holders = await Promise.all([1, 2].map(() => RawClient.connect(edge.rwPort)));
  for (const holder of holders) {
    await holder.startup({ user: 'app', database: 'postgres' }, 'types-secret');
    expect(errorOf(await holder.query('BEGIN'))).toBeUndefined();
  }
  const waiter = await RawClient.connect(edge.rwPort);
  await waiter.startup({ user: 'app', database: 'postgres' }, 'types-secret');
  const started = Date.now();
  expect(errorOf(await waiter.query('SELECT 1'))).toMatchObject({ code: '53300', severity: 'ERROR' });
  expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  for (const holder of holders) {
    await holder.query('COMMIT');
    holder.close();
  }
  expect(rowsOf(await waiter.query('SELECT 7'))).toEqual([[Buffer.from('7')]]);
  waiter.close();
});

it('takes a parameter type outside the list as the backend infers it (uuid, issue 18)', async () => {
  client.send(
    { type: 'Parse', statement: 'u', sql: 'SELECT $1::uuid::text', paramTypes: [] },
    { type: 'Bind', portal: '', statement: 'u', paramFormats: [0], params: [Buffer.from('6ba7b810-9dad-11d1-80b4-00c04fd430c8')], resultFormats: [0] },
    { type: 'Execute', portal: '', maxRows: 0 },
    { type: 'Sync' },
  );
  const messages = await client.untilReady();
  expect(errorOf(messages)).toBeUndefined();
  expect(rowsOf(messages)).toEqual([[Buffer.from('6ba7b810-9dad-11d1-80b4-00c04fd430c8')]]);
  expect(rowsOf(await client.query('SELECT 1'))).toEqual([[Buffer.from('1')]]);
});
