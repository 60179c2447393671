// Tracked startup parameters in transaction mode (PgBouncer's tracked parameters): node-postgres,
// psql and a raw protocol client give statement_timeout, search_path, TimeZone, DateStyle,
// application_name... directly or as `options` -c settings; they hold on a pooled connection the
// sessions share, SHOW and pg_stat_activity agree with the greeting's ParameterStatus, another
// session never sees them, and unknown parameters are refused unless ignore_startup_parameters lists them.
import { Client, type ClientConfig } from 'pg';
import { processEnvironment } from '@dbproxy/config';
import { metricValue } from '@dbproxy/runtime/testing';
import type { PostgresServer, ReplicatedServers } from '@dbproxy/testing';
import type { EdgeHarness } from './harness';
import { startTransactionFixture, type TransactionFixture } from './transaction-fixture';
import { run } from './processes';
import { errorOf, RawClient, rowsOf } from './raw-client';

jest.setTimeout(90_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
let fx: TransactionFixture;

beforeAll(async () => {
  // one pooled connection: every session's statements run on the connection the others used
  // (reads queued behind each other's on it when it is lent: pipeline_depth)
  fx = await startTransactionFixture('pool_max_per_backend = 1\npipeline_depth = 4\nignore_startup_parameters = ["dbproxy_test_ignored", "geqo"]');
  ({ pg, edge } = fx);
  const setup = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await setup.connect();
  await setup.query('CREATE SCHEMA s1');
  await setup.query("CREATE TABLE s1.marker AS SELECT 's1'::text AS v");
  await setup.end();
});

afterAll(async () => {
  await fx?.stop();
});

const connect = async (extra: Partial<ClientConfig> = {}) => {
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'postgres', ...extra });
  await c.connect();
  return c;
};

const show = async (c: Client, name: string) => Object.values((await c.query<Record<string, string>>(`SHOW ${name}`)).rows[0] ?? {})[0];
const applicationName = async (c: Client) => (await c.query<{ a: string }>('SELECT application_name AS a FROM pg_stat_activity WHERE pid = pg_backend_pid()')).rows[0].a;

it('applies node-postgres\'s statement_timeout, application_name and options -c settings on the shared connection, and only there', async () => {
  const a = await connect({ statement_timeout: 200, application_name: 'app-one', options: '-c search_path=s1,public -c TimeZone=Asia/Tokyo' });
  try {
    expect(await show(a, 'statement_timeout')).toBe('200ms');
    expect(await show(a, 'search_path')).toBe('s1,public'); // as PostgreSQL keeps it from a startup option
    expect(await show(a, 'TimeZone')).toBe('Asia/Tokyo');
    expect(await applicationName(a)).toBe('app-one');
    expect((await a.query('SELECT v FROM marker')).rows).toEqual([{ v: 's1' }]);
    await expect(a.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014', message: 'canceling statement due to statement timeout' });
    // another session on the same pooled connection has the server's defaults
    const b = await connect();
    try {
      expect(await show(b, 'statement_timeout')).toBe('0');
      expect(await show(b, 'search_path')).toBe('"$user", public');
      expect(await show(b, 'TimeZone')).not.toBe('Asia/Tokyo');
      expect(await applicationName(b)).toBe('');
      await expect(b.query('SELECT v FROM marker')).rejects.toMatchObject({ code: '42P01' });
      // and back: the first session's settings come back for its next statement
      expect(await show(a, 'statement_timeout')).toBe('200ms');
      expect(await applicationName(a)).toBe('app-one');
    } finally {
      await b.end();
    }
  } finally {
    await a.end();
  }
});

it('greets with ParameterStatus values that SHOW agrees with, as PostgreSQL spells them', async () => {
  const raw = await RawClient.connect(edge.rwPort);
  try {
    const greeting = await raw.startup({ user: 'app', database: 'postgres', TimeZone: 'utc', DateStyle: 'german, dmy', IntervalStyle: 'iso_8601', application_name: 'raw-one' }, 'app-secret');
    expect(errorOf(greeting)).toBeUndefined();
    const status = new Map(greeting.flatMap((m) => (m.type === 'ParameterStatus' ? [[m.name, m.value] as const] : [])));
    expect(status.get('DateStyle')).toBe('German, DMY');
    expect(status.get('IntervalStyle')).toBe('iso_8601');
    expect(status.get('application_name')).toBe('raw-one');
    for (const name of ['TimeZone', 'DateStyle', 'IntervalStyle', 'application_name']) {
      const answer = await raw.query(`SHOW ${name}`);
      expect(rowsOf(answer).map((row) => row[0]?.toString())).toEqual([status.get(name)]);
    }
    const dated = await raw.query("SELECT '2024-03-01'::date::text, interval '1 day'::text");
    expect(rowsOf(dated).map((row) => row.map((v) => v?.toString()))).toEqual([['01.03.2024', 'P1D']]);
  } finally {
    raw.close();
  }
});

it('refuses an unknown startup parameter with FATAL 42704 unless ignore_startup_parameters lists it', async () => {
  const refused = await RawClient.connect(edge.rwPort);
  const answer = await refused.startup({ user: 'app', database: 'postgres', work_mem: '64MB' }, 'app-secret');
  refused.close();
  expect(answer.find((m) => m.type === 'ErrorResponse')).toMatchObject({ severity: 'FATAL', code: '42704' });
  expect(errorOf(answer)?.message).toContain('"work_mem"');
  expect(errorOf(answer)?.message).toContain('ignore_startup_parameters');
  // a setting in options PostgreSQL does not know: its own 42704
  await expect(connect({ options: '-c dbproxy_no_such_setting=1' })).rejects.toMatchObject({ code: '42704', message: expect.stringContaining('dbproxy_no_such_setting') });
  // listed: accepted and ignored (the server's own value stays)
  const ignored = await RawClient.connect(edge.rwPort);
  try {
    expect(errorOf(await ignored.startup({ user: 'app', database: 'postgres', dbproxy_test_ignored: 'x', options: '-c geqo=off' }, 'app-secret'))).toBeUndefined();
    expect(rowsOf(await ignored.query('SHOW geqo')).map((row) => row[0]?.toString())).toEqual(['on']);
  } finally {
    ignored.close();
  }
});

it('tracks any setting in options, as --name=value or -c name=value, on the shared connection and only there', async () => {
  const a = await connect({ options: '--default_transaction_isolation=serializable -c work_mem=3MB --myapp.tenant=t7' });
  try {
    expect(await show(a, 'default_transaction_isolation')).toBe('serializable');
    expect(await show(a, 'work_mem')).toBe('3MB');
    expect(await show(a, 'myapp.tenant')).toBe('t7');
    await a.query('BEGIN');
    expect(await show(a, 'transaction_isolation')).toBe('serializable');
    await a.query('COMMIT');
    const b = await connect();
    try {
      expect(await show(b, 'default_transaction_isolation')).toBe('read committed');
      expect(await show(b, 'work_mem')).toBe('4MB');
      // a custom setting, once defined on the connection, stays defined there with no value (as after DISCARD ALL)
      expect((await b.query("SELECT coalesce(current_setting('myapp.tenant', true), '') AS v")).rows).toEqual([{ v: '' }]);
      expect(await show(a, 'default_transaction_isolation')).toBe('serializable');
    } finally {
      await b.end();
    }
  } finally {
    await a.end();
  }
  // a setting a started connection cannot take: PostgreSQL's own refusal, at startup
  await expect(connect({ options: '-c log_connections=on' })).rejects.toMatchObject({ code: '55P02', message: expect.stringContaining('log_connections') });
  await expect(connect({ options: '-c work_mem=lots' })).rejects.toMatchObject({ code: '22023' });
});

it('refuses a value PostgreSQL refuses with its own FATAL, and SET of a tracked parameter still pins the session', async () => {
  await expect(connect({ options: '-c TimeZone=Nowhere/Land' })).rejects.toMatchObject({ code: '22023', message: expect.stringContaining('TimeZone') });
  const a = await connect({ statement_timeout: 100 });
  await a.query('SET statement_timeout = 0');
  expect((await a.query('SELECT pg_sleep(0.3)::text AS slept')).rows).toEqual([{ slept: '' }]);
  expect(await show(a, 'statement_timeout')).toBe('0');
  await a.end();
  // the pinned connection went with its session: the next one starts from its own settings
  const b = await connect({ statement_timeout: 100 });
  await expect(b.query('SELECT pg_sleep(0.3)')).rejects.toMatchObject({ code: '57014' });
  await b.end();
});

it('serves psql with PGOPTIONS and PGAPPNAME', async () => {
  const env = { ...processEnvironment(), PGPASSWORD: 'app-secret', PGOPTIONS: '-c statement_timeout=1234 -c search_path=s1', PGAPPNAME: 'psql-test' };
  const result = await run(
    'psql',
    ['-h', '127.0.0.1', '-p', String(edge.rwPort), '-U', 'app', '-X', '-At', '-c', 'SHOW statement_timeout', '-c', 'SELECT v FROM marker', '-c', 'SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()', 'postgres'],
    { env },
  );
  expect(result.stderr).toBe('');
  expect(result.stdout.trim().split('\n')).toEqual(['1234ms', 's1', 'psql-test']);
});

it('gives each of many concurrent sessions its own settings when their reads are queued on one connection (pipeline_depth)', async () => {
  // even sessions time out at 40 ms, odd ones never: a 60 ms read fails for exactly the even ones
  const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => connect(i % 2 === 0 ? { statement_timeout: 40 } : {})));
  try {
    const wrong: string[] = [];
    await Promise.all(
      clients.map(async (c, i) => {
        for (let n = 0; n < 6; n++) {
          const code = await c.query('SELECT pg_sleep(0.06)').then(
            () => 'ok',
            (err: { code?: string }) => err.code,
          );
          if (code !== (i % 2 === 0 ? '57014' : 'ok')) wrong.push(`client ${i}: ${code}`);
        }
      }),
    );
    expect(wrong).toEqual([]);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  expect(metricValue(await edge.metrics(), 'dbproxy_pg_pipelined_units_total')).toBeGreaterThan(0);
});
