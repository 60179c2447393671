// (a) A node:net client built on protocol-pg runs simple and extended queries against the real PostgreSQL
// and reads back exactly what node-postgres (`pg`) reads.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { decodeValue, encodeValue, PgTypeOid, type PgTypeName, type PgValue } from '../src';
import { MiniClient, ServerError } from './support/mini-client';

jest.setTimeout(60_000);

const PORT = 5432;
const name = `dbp_protopg_${randomBytes(4).toString('hex')}`;
const admin = new Client({ host: '127.0.0.1', port: PORT, user: 'postgres', database: 'postgres' });
let pg: Client;
let mini: MiniClient;

/** pg with every type left as the server's text, to compare byte-exact. */
const rawText = { getTypeParser: () => (value: string) => value };

const VALUES: [PgTypeName, PgValue][] = [
  ['bool', true],
  ['bool', false],
  ['int2', -32768],
  ['int4', 2147483647],
  ['int8', -9223372036854775808n],
  ['int8', 9007199254740993n],
  ['float4', 1.5],
  ['float4', Math.fround(0.1)],
  ['float4', NaN],
  ['float4', -Infinity],
  ['float8', 0.1],
  ['float8', -0],
  ['float8', 5e-324],
  ['float8', Infinity],
  ['text', 'grüße ✓ 😀 \\ \' "'],
  ['varchar', ''],
  ['bpchar', 'ab  '],
  ['name', 'pg_class'],
  ['bytea', Buffer.from([0, 1, 0xfe, 0xff, 0x5c])],
  ['oid', 4294967295],
  ['char', 'x'],
  ['char', '\u00e9'],
  ['json', '{"b": 1, "b": [2.50, "x"]}'],
  ['jsonb', '{"a": [1, 2.50, null], "b": {"c": "ü"}}'],
  ['numeric', '-123456789012345678901234567890.000000000000000000001'],
  ['numeric', '0.00'],
  ['numeric', 'NaN'],
  ['numeric', 'Infinity'],
  ['date', '2024-02-29'],
  ['date', '4714-11-24 BC'],
  ['date', '5874897-12-31'],
  ['date', '-infinity'],
  ['time', '23:59:59.999999'],
  ['time', '24:00:00'],
  ['timestamp', '2024-02-29 12:34:56.789012'],
  ['timestamp', '0044-03-15 10:00:00 BC'],
  ['timestamp', '294276-12-31 23:59:59.999999'],
  ['timestamp', 'infinity'],
  ['timestamptz', '2024-02-29 12:34:56.789012+00'],
  ['timestamptz', '1901-12-13 20:45:52.5+00'],
];

beforeAll(async () => {
  await admin.connect();
  await admin.query(`CREATE ROLE ${name} LOGIN`);
  await admin.query(`CREATE DATABASE ${name} OWNER ${name}`);
  pg = new Client({ host: '127.0.0.1', port: PORT, user: name, database: name, options: '-c TimeZone=UTC' });
  await pg.connect();
  mini = await MiniClient.connect({ port: PORT, user: name, database: name, parameters: { TimeZone: 'UTC', application_name: 'protocol-pg-test' } });
});

afterAll(async () => {
  await mini?.close();
  await pg?.end();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`DROP ROLE IF EXISTS ${name}`);
  await admin.end();
});

describe('tiny client on the real server', () => {
  it('authenticates (trust), receives session parameters and runs a simple query', async () => {
    expect(mini.authRequests).toEqual(['AuthenticationOk']);
    expect(mini.parameters.get('server_version')).toMatch(/^15\./);
    expect(mini.parameters.get('TimeZone')).toBe('UTC');
    const sql = `SELECT 1::int4 AS a, 'x y'::text AS b, NULL::int8 AS c, 12.50::numeric AS d, current_user AS e`;
    const result = await mini.simpleQuery(sql);
    const viaPg = await pg.query({ text: sql, rowMode: 'array', types: rawText });
    expect(result.tag).toBe('SELECT 1');
    expect(result.fields.map((f) => f.name)).toEqual(viaPg.fields.map((f) => f.name));
    expect(result.fields.map((f) => f.typeOid)).toEqual(viaPg.fields.map((f) => f.dataTypeID));
    expect(result.rows.map((row) => row.map((v) => v?.toString('utf8') ?? null))).toEqual(viaPg.rows);
  });

  it('decodes simple-query text values to what pg parses', async () => {
    const sql = `SELECT true, 32767::int2, -5::int4, 9223372036854775807::int8, 1.25::float8, 'ü'::text, '\\x00ff'::bytea, 26::oid, 99.990::numeric`;
    const result = await mini.simpleQuery(sql);
    const values = result.rows[0].map((v, i) => decodeValue(result.fields[i].typeOid, 0, v as Buffer));
    const viaPg = await pg.query({ text: sql, rowMode: 'array' });
    expect(values).toEqual([true, 32767, -5, 9223372036854775807n, 1.25, 'ü', Buffer.from([0, 0xff]), 26, '99.990']);
    expect(viaPg.rows[0]).toEqual([true, 32767, -5, '9223372036854775807', 1.25, 'ü', Buffer.from([0, 0xff]), 26, '99.990']);
  });

  it.each(VALUES.map(([type, value]) => [type, String(value instanceof Buffer ? value.toString('hex') : value), value] as const))(
    'extended query with a binary %s parameter and binary result: %s',
    async (type, _label, value) => {
      const oid = PgTypeOid[type];
      const sql = `SELECT $1::${type === 'char' ? '"char"' : type} AS v`;
      const result = await mini.extendedQuery(sql, [oid], [encodeValue(oid, 1, value)], [1], [1]);
      expect(result.fields[0]).toMatchObject({ typeOid: oid, format: 1 });
      const fromBinary = decodeValue(oid, 1, result.rows[0][0] as Buffer);
      // Same statement through pg with a text parameter and the server's text result.
      const textParam = encodeValue(oid, 0, value);
      const viaPg = await pg.query({ text: sql, values: [type === 'bytea' ? textParam.toString('latin1') : textParam.toString('utf8')], rowMode: 'array', types: rawText });
      const serverText = String(viaPg.rows[0][0]);
      expect(fromBinary).toEqual(decodeValue(oid, 0, Buffer.from(serverText, 'utf8')));
      if (type !== 'jsonb') expect(fromBinary).toEqual(value); // jsonb normalises its text; everything else is lossless
      // And the same value requested in text format from our client is the server's exact text.
      const asText = await mini.extendedQuery(sql, [oid], [encodeValue(oid, 1, value)], [1], [0]);
      expect(asText.rows[0][0]?.toString('utf8')).toBe(serverText);
    },
  );

  it('sends every listed type in one binary row and reads it back', async () => {
    const columns = VALUES.map(([type], i) => `$${i + 1}::${type === 'char' ? '"char"' : type}`).join(', ');
    const oids = VALUES.map(([type]) => PgTypeOid[type]);
    const params = VALUES.map(([type, value]) => encodeValue(PgTypeOid[type], 1, value));
    const result = await mini.extendedQuery(`SELECT ${columns}, NULL::int4`, [...oids, 23], [...params, null], [1], [1]);
    const decoded = result.rows[0].slice(0, -1).map((v, i) => decodeValue(oids[i], 1, v as Buffer));
    expect(result.rows[0].at(-1)).toBeNull();
    VALUES.forEach(([type, value], i) => {
      if (type !== 'jsonb') expect([type, decoded[i]]).toEqual([type, value]);
    });
  });

  it('reports server errors as ErrorResponse with SQLSTATE and recovers at Sync', async () => {
    const failure = await mini.extendedQuery('SELEC 1', [], [], [], []).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ServerError);
    expect((failure as ServerError).response).toMatchObject({ severity: 'ERROR', code: '42601', position: '1' });
    const divide = await mini.simpleQuery('SELECT 1/0').catch((err: unknown) => err);
    expect((divide as ServerError).response.code).toBe('22012');
    const after = await mini.extendedQuery('SELECT $1::int8 + 1', [20], [encodeValue(20, 1, 41n)], [1], [1]);
    expect(decodeValue(20, 1, after.rows[0][0] as Buffer)).toBe(42n);
  });
});
