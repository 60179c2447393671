// Transaction mode at PgBouncer's compatibility (issue 18): every type forwarded as the backend
// wrote it (text and binary, results and parameters), COPY both ways on a held connection, several
// statements in one query, a backend FATAL that costs the session one ERROR, and the silent close
// PostgreSQL gives an impossible startup packet. Real clients (pg, psql, a raw protocol client).
import { connect as tcpConnect } from 'node:net';
import { Client } from 'pg';
import { processEnvironment } from '@dbproxy/config';
import type { BackendMessage, FrontendMessage } from '@dbproxy/protocol-pg';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { primaryAndReplica, startEdge, type EdgeHarness } from './harness';
import { run } from './processes';
import { errorOf, RawClient, rowsOf } from './raw-client';

jest.setTimeout(90_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
const PASSWORD = 'compat-secret';
/** 'on' on a standby (a replica ran it), 'off' on the primary. */
const RO = "current_setting('transaction_read_only') AS ro";
const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;

const connect = async (port = edge.rwPort, extra: Record<string, unknown> = {}) => {
  const c = new Client({ host: '127.0.0.1', port, user: 'app', password: PASSWORD, database: 'postgres', ...extra });
  await c.connect();
  return c;
};

async function direct<T = Record<string, unknown>>(server: PostgresServer, sql: string): Promise<T[]> {
  const c = new Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

async function raw(port: number, user = 'app', password = PASSWORD): Promise<RawClient> {
  const c = await RawClient.connect(port);
  const startup = await c.startup({ user, database: 'postgres', client_encoding: 'UTF8' }, password);
  expect(startup.at(-1)).toEqual({ type: 'ReadyForQuery', status: 'I' });
  return c;
}

beforeAll(async () => {
  pg = await startPostgres({ replicas: 1 });
  await requirePoolPassword(pg);
  edge = await startEdge(
    primaryAndReplica(pg, backend),
    'routing_mode = "transaction"\npool_max_per_backend = 4\nmax_result_bytes = 100000\nquery_timeout_seconds = 20',
    `[[users]]\nname = "app"\npassword = "${PASSWORD}"`,
  );
  for (const sql of [
    'CREATE EXTENSION hstore',
    'CREATE EXTENSION citext',
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
    'CREATE TYPE pair AS (a int, b text)',
    'CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)',
    'CREATE TABLE t (v int)',
  ]) {
    await direct(pg.primary, sql);
  }
  await pg.waitForReplicaCatchUp();
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

/** Expressions of types outside spec 003's list: arrays, uuid, interval, inet, timetz, enums, composites, extension types. */
const EXPRESSIONS = [
  "ARRAY[1, NULL, 3]::int4[]",
  "ARRAY['a b', 'c\"d']::text[]",
  "'{{1.5,2},{3,4}}'::float8[]",
  "'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid",
  "ARRAY['6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid]",
  "'1 year 2 mons 3 days 04:05:06.789'::interval",
  "'192.168.0.1/24'::inet",
  "'10.0.0.0/8'::cidr",
  "'08:00:2b:01:02:03'::macaddr",
  "'12:34:56.789+05:30'::timetz",
  "'happy'::mood",
  "ARRAY['sad', 'ok']::mood[]",
  "ROW(7, 'seven')::pair",
  "'a=>1, b=>NULL'::hstore",
  "'MiXeD'::citext",
  "'[1,10)'::int4range",
  "'(1,2),(3,4)'::box",
  "'<(0,0),1>'::circle",
  "B'10101'",
  "'a fat cat'::tsvector",
  "'<x>1</x>'::xml",
  "'$1.50'::money",
  'pg_current_snapshot()',
];

/** Parse/Bind/Describe/Execute/Sync of `SELECT expr`, results in `format`; what comes back. */
async function select(c: RawClient, expr: string, format: 0 | 1): Promise<BackendMessage[]> {
  c.send(
    { type: 'Parse', statement: '', sql: `SELECT ${expr} AS v`, paramTypes: [] },
    { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [format] },
    { type: 'Describe', kind: 'P', name: '' },
    { type: 'Execute', portal: '', maxRows: 0 },
    { type: 'Sync' },
  );
  return c.untilReady();
}

describe('every type', () => {
  let proxied: RawClient;
  let plain: RawClient;
  beforeAll(async () => {
    proxied = await raw(edge.rwPort);
    plain = await RawClient.connect(pg.primary.port);
    await plain.startup({ user: 'postgres', database: 'postgres', client_encoding: 'UTF8' });
  });
  afterAll(() => {
    proxied.close();
    plain.close();
  });

  it.each([
    ['text', 0],
    ['binary', 1],
  ] as const)('forwards result columns of any type in %s format exactly as PostgreSQL sends them', async (_name, format) => {
    for (const expr of EXPRESSIONS.filter((e) => !(format === 1 && e.includes('snapshot')))) {
      const through = await select(proxied, expr, format);
      const straight = await select(plain, expr, format);
      expect(errorOf(through)).toBeUndefined();
      const typeOf = (messages: BackendMessage[]) => messages.flatMap((m) => (m.type === 'RowDescription' ? [m.fields[0].typeOid, m.fields[0].format] : []));
      if (!expr.includes('hstore') && !expr.includes('citext') && !expr.includes('mood') && !expr.includes('pair')) expect(typeOf(through)).toEqual(typeOf(straight));
      else expect(typeOf(through)[1]).toBe(format); // extension and user types: OIDs differ between the two databases
      expect(rowsOf(through)).toEqual(rowsOf(straight));
    }
  });

  it('forwards parameters of any type as the client sent them, in text and binary', async () => {
    // uuid[] and interval in binary: the bytes PostgreSQL itself writes for them
    const [[uuidArray]] = rowsOf(await select(plain, "ARRAY['6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid]", 1));
    const [[interval]] = rowsOf(await select(plain, "'3 days 04:05:06'::interval", 1));
    proxied.send(
      { type: 'Parse', statement: 'typed', sql: 'SELECT $1::uuid[]::text AS a, $2::interval::text AS b, $3::inet::text AS c, $4::mood::text AS d', paramTypes: [2951, 1186, 869, 0] },
      { type: 'Bind', portal: '', statement: 'typed', paramFormats: [1, 1, 0, 0], params: [uuidArray, interval, Buffer.from('10.1.2.3/32'), Buffer.from('ok')], resultFormats: [0] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    const messages = await proxied.untilReady();
    expect(errorOf(messages)).toBeUndefined();
    expect(rowsOf(messages)[0].map((v) => v?.toString())).toEqual(['{6ba7b810-9dad-11d1-80b4-00c04fd430c8}', '3 days 04:05:06', '10.1.2.3/32', 'ok']);
  });

  it('returns arrays, uuids, enums and composites to node-postgres', async () => {
    const c = await connect();
    const text = await c.query("SELECT ARRAY[1, 2]::int[] AS a, '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid AS u, 'ok'::mood AS m, ROW(1, 'x')::pair AS p, $1::uuid[] AS q", [['6ba7b810-9dad-11d1-80b4-00c04fd430c8']]);
    expect(text.rows).toEqual([{ a: [1, 2], u: '6ba7b810-9dad-11d1-80b4-00c04fd430c8', m: 'ok', p: '(1,x)', q: ['6ba7b810-9dad-11d1-80b4-00c04fd430c8'] }]);
    await c.end();
  });
});

describe('COPY', () => {
  const env = { ...processEnvironment(), PGPASSWORD: PASSWORD, PGCLIENTENCODING: 'UTF8', PGCONNECT_TIMEOUT: '5' };
  const psql = () => ['-h', '127.0.0.1', '-p', String(edge.rwPort), '-U', 'app', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-X', '-q'];

  it('loads with \\copy FROM STDIN and dumps with \\copy TO STDOUT (psql), beyond max_result_bytes', async () => {
    const input = Array.from({ length: 5000 }, (_, i) => `${i}\tcopied row ${i} ${'x'.repeat(40)}`).join('\n') + '\n';
    const load = await run('psql', [...psql(), '-c', '\\copy items FROM STDIN'], { input, env });
    expect(load.stderr).toBe('');
    expect(load.status).toBe(0);
    expect(await direct(pg.primary, 'SELECT count(*)::int AS n FROM items')).toEqual([{ n: 5000 }]);
    // about 300 kB: three times max_result_bytes, streamed as PgBouncer streams it
    const dump = await run('psql', [...psql(), '-c', '\\copy (SELECT * FROM items ORDER BY id) TO STDOUT'], { env });
    expect(dump.stderr).toBe('');
    expect(dump.stdout).toBe(input);
    // and the session's connection went back to the pool clean: later queries run
    const c = await connect();
    expect((await c.query('SELECT count(*)::int AS n FROM items')).rows).toEqual([{ n: 5000 }]);
    await c.end();
  });

  it('speaks COPY FROM STDIN on the wire (data, CopyDone, CopyFail, a bad row, inside a transaction) and COPY TO STDOUT with node-postgres', async () => {
    const c = await raw(edge.rwPort);
    const copyIn = async (sql: string, ...messages: FrontendMessage[]) => {
      c.send({ type: 'Query', sql });
      const response = await c.next();
      expect(response?.type).toBe('CopyInResponse');
      c.send(...messages);
      return c.untilReady();
    };
    const done = await copyIn('COPY t FROM STDIN', { type: 'CopyData', data: Buffer.from('1\n2\n') }, { type: 'CopyData', data: Buffer.from('3\n') }, { type: 'CopyDone' });
    expect(done.map((m) => m.type)).toEqual(['CommandComplete', 'ReadyForQuery']);
    expect(done[0]).toMatchObject({ tag: 'COPY 3' });
    const failed = await copyIn('COPY t FROM STDIN', { type: 'CopyData', data: Buffer.from('4\n') }, { type: 'CopyFail', message: 'client gave up' });
    expect(errorOf(failed)).toMatchObject({ code: '57014', message: expect.stringContaining('client gave up') });
    const bad = await copyIn('COPY t FROM STDIN', { type: 'CopyData', data: Buffer.from('five\n') }, { type: 'CopyDone' });
    expect(errorOf(bad)).toMatchObject({ code: '22P02' });
    // inside a transaction the COPY runs on the held connection and rolls back with it
    expect(errorOf(await c.query('BEGIN'))).toBeUndefined();
    const held = await copyIn('COPY t FROM STDIN', { type: 'CopyData', data: Buffer.from('100\n') }, { type: 'CopyDone' });
    expect(held.at(-1)).toEqual({ type: 'ReadyForQuery', status: 'T' });
    expect(rowsOf(await c.query('SELECT count(*) FROM t'))).toEqual([[Buffer.from('4')]]);
    expect(errorOf(await c.query('ROLLBACK'))).toBeUndefined();
    expect(rowsOf(await c.query('SELECT count(*) FROM t'))).toEqual([[Buffer.from('3')]]);
    c.close();
    // node-postgres: COPY TO STDOUT through a simple query is streamed to the client (its parser sees CopyOutResponse/CopyData)
    const n = await connect();
    const seen: string[] = [];
    const conn = (n as unknown as { connection: { on(e: string, f: (m: { chunk?: Buffer }) => void): void } }).connection;
    conn.on('copyData', (m) => seen.push(String(m.chunk)));
    await n.query('COPY (SELECT v FROM t ORDER BY v) TO STDOUT');
    expect(seen.join('')).toBe('1\n2\n3\n');
    await n.end();
  });

  it('runs COPY FROM STDIN sent through the extended protocol exactly as PostgreSQL answers it (the Sync after CopyDone ends it)', async () => {
    const plain = await RawClient.connect(pg.primary.port);
    await plain.startup({ user: 'postgres', database: 'postgres', client_encoding: 'UTF8' });
    const proxied = await raw(edge.rwPort);
    const extendedCopy = async (c: RawClient, rows: string, end: FrontendMessage) => {
      c.send(
        { type: 'Parse', statement: '', sql: 'COPY t FROM STDIN', paramTypes: [] },
        { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] },
        { type: 'Execute', portal: '', maxRows: 0 },
        { type: 'Sync' },
      );
      const before: BackendMessage[] = [];
      for (let m = await c.next(); m && m.type !== 'CopyInResponse'; m = await c.next()) before.push(m);
      c.send({ type: 'CopyData', data: Buffer.from(rows) }, end, { type: 'Sync' }); // libpq sends a Sync after CopyDone in the extended protocol
      return [...before.map((m) => m.type), 'CopyInResponse', ...(await c.untilReady()).map((m) => (m.type === 'ErrorResponse' ? `E${m.code}` : m.type))];
    };
    for (const [rows, end] of [
      ['40\n41\n', { type: 'CopyDone' }],
      ['42\n', { type: 'CopyFail', message: 'stop' }],
      ['forty-three\n', { type: 'CopyDone' }],
    ] as const) {
      const direct_ = await extendedCopy(plain, rows, end);
      expect(await extendedCopy(proxied, rows, end)).toEqual(direct_);
    }
    expect(await extendedCopy(proxied, '44\n', { type: 'CopyDone' })).toEqual(['ParseComplete', 'BindComplete', 'CopyInResponse', 'CommandComplete', 'ReadyForQuery']);
    expect(rowsOf(await proxied.query('SELECT count(*) FROM t WHERE v >= 40'))).toEqual([[Buffer.from('5')]]); // 40, 41 twice (direct and proxied), 44
    plain.close();
    proxied.close();
  });

  it('runs COPY TO STDOUT on a replica through the read-only listener and refuses COPY FROM there', async () => {
    await pg.waitForReplicaCatchUp();
    const dump = await run('psql', ['-h', '127.0.0.1', '-p', String(edge.roPort), '-U', 'app', '-d', 'postgres', '-X', '-q', '-c', "\\copy (SELECT current_setting('transaction_read_only'), count(*) FROM items) TO STDOUT"], { env });
    expect(dump.stderr).toBe('');
    expect(dump.stdout).toBe('on\t5000\n'); // a standby ran it
    const ro = await connect(edge.roPort);
    await expect(ro.query('COPY t FROM STDIN')).rejects.toMatchObject({ code: '25006' });
    await ro.end();
  });
});

describe('several statements in one query', () => {
  it('runs a batch of reads on a replica and anything else on the primary, with one result per statement', async () => {
    const c = await connect();
    const reads = (await c.query(`SELECT ${RO}; SELECT 2 AS two`)) as unknown as { rows: unknown[] }[];
    expect(reads.map((r) => r.rows)).toEqual([[{ ro: 'on' }], [{ two: 2 }]]);
    const mixed = (await c.query(`INSERT INTO t VALUES (10); SELECT ${RO}`)) as unknown as { rows: unknown[] }[];
    expect(mixed.map((r) => r.rows)).toEqual([[], [{ ro: 'off' }]]);
    await c.end();
  });

  it('gives them PostgreSQL\'s implicit transaction: a failing statement undoes the earlier ones', async () => {
    const c = await connect();
    await expect(c.query('INSERT INTO t VALUES (20); SELECT 1 / 0')).rejects.toMatchObject({ code: '22012' });
    expect(await direct(pg.primary, 'SELECT count(*)::int AS n FROM t WHERE v = 20')).toEqual([{ n: 0 }]);
    // an explicit COMMIT inside the text ends it early, as PostgreSQL does
    await expect(c.query('BEGIN; INSERT INTO t VALUES (21); COMMIT; SELECT 1 / 0')).rejects.toMatchObject({ code: '22012' });
    expect(await direct(pg.primary, 'SELECT count(*)::int AS n FROM t WHERE v = 21')).toEqual([{ n: 1 }]);
    expect((await c.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }]);
    await c.end();
  });

  it('pins and holds as the statements would one by one', async () => {
    const c = await connect();
    await c.query("SET application_name = 'pinned-by-batch'; SELECT 1");
    const pids = new Set<number>();
    for (let i = 0; i < 4; i++) pids.add(((await c.query('SELECT pg_backend_pid() AS p, current_setting(\'application_name\') AS a')).rows[0] as { p: number; a: string }).p);
    expect(pids.size).toBe(1);
    expect((await c.query("SELECT current_setting('application_name') AS a")).rows).toEqual([{ a: 'pinned-by-batch' }]);
    await c.end();
    const d = await connect();
    await d.query('BEGIN; INSERT INTO t VALUES (30)');
    expect(await direct(pg.primary, 'SELECT count(*)::int AS n FROM t WHERE v = 30')).toEqual([{ n: 0 }]); // still open
    await d.query('ROLLBACK');
    expect((await d.query('SELECT count(*)::int AS n FROM t WHERE v = 30')).rows).toEqual([{ n: 0 }]);
    await d.end();
  });

  it('answers a multi-statement Parse with PostgreSQL\'s own 42601', async () => {
    const c = await connect();
    await expect(c.query({ text: 'SELECT 1; SELECT 2', values: [] , name: 'two' })).rejects.toMatchObject({ code: '42601', message: expect.stringContaining('cannot insert multiple commands') });
    expect((await c.query('SELECT 4 AS four')).rows).toEqual([{ four: 4 }]);
    await c.end();
  });
});

describe('a backend FATAL', () => {
  async function terminateWhenRunning(sql: string): Promise<void> {
    // a read runs on the replica, a transaction's statement on the primary
    const [server, pid] = await waitFor(async () => {
      for (const server of [pg.primary, pg.replicas[0]]) {
        const rows = await direct<{ pid: number }>(server, `SELECT pid FROM pg_stat_activity WHERE query = '${sql}' AND state = 'active'`);
        if (rows[0]) return [server, rows[0].pid] as const;
      }
      return undefined;
    }, { timeoutMs: 10_000, description: 'the pooled connection running the query' });
    await direct(server, `SELECT pg_terminate_backend(${pid})`);
  }

  it('costs an unheld session one ERROR; the node-postgres client goes on', async () => {
    const c = await connect();
    const sql = 'SELECT pg_sleep(30), 1 AS unheld';
    const pending = c.query(`${sql}`);
    await terminateWhenRunning(sql);
    await expect(pending).rejects.toMatchObject({ code: '57P01', severity: 'ERROR' });
    expect((await c.query('SELECT 1 AS again')).rows).toEqual([{ again: 1 }]);
    await c.end();
  });

  it('sends exactly one ErrorResponse then ReadyForQuery to an unheld session (raw)', async () => {
    const c = await raw(edge.rwPort);
    const sql = 'SELECT pg_sleep(30), 2 AS unheld';
    c.send({ type: 'Query', sql });
    await terminateWhenRunning(sql);
    const messages = await c.untilReady();
    expect(messages.map((m) => m.type)).toEqual(['RowDescription', 'ErrorResponse', 'ReadyForQuery']);
    expect(errorOf(messages)).toMatchObject({ severity: 'ERROR', code: '57P01' });
    expect(rowsOf(await c.query('SELECT 6'))).toEqual([[Buffer.from('6')]]);
    c.close();
  });

  it('ends a session whose transaction was on that connection with one FATAL and a close', async () => {
    const c = await raw(edge.rwPort);
    expect(errorOf(await c.query('BEGIN'))).toBeUndefined();
    const sql = 'SELECT pg_sleep(30), 3 AS held';
    c.send({ type: 'Query', sql });
    await terminateWhenRunning(sql);
    const messages: BackendMessage[] = [];
    for (let m = await c.next(); m; m = await c.next()) messages.push(m);
    // the RowDescription PostgreSQL sent before it was terminated, then one FATAL, then nothing
    expect(messages.map((m) => m.type)).toEqual(['RowDescription', 'ErrorResponse']);
    expect(errorOf(messages)).toMatchObject({ severity: 'FATAL', code: '08006' });
    expect(c.closed).toBe(true);
  });
});

describe('startup packets PostgreSQL closes on silently', () => {
  /** Writes `bytes` (then ends the socket when `end`), and resolves with what came back and how long the close took. */
  function probe(bytes: Buffer, end: boolean, port = edge.rwPort): Promise<{ received: number; ms: number }> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      let received = 0;
      const socket = tcpConnect({ host: '127.0.0.1', port }, () => (end ? socket.end(bytes) : socket.write(bytes)));
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
      socket.on('error', reject);
      socket.on('close', () => resolve({ received, ms: Date.now() - started }));
    });
  }

  it('closes at once, without a word, on a Terminate sent before the StartupMessage (node-postgres connect(); end())', async () => {
    const terminate = Buffer.from([0x58, 0, 0, 0, 4]);
    const result = await probe(terminate, false);
    expect(result).toMatchObject({ received: 0 });
    expect(result.ms).toBeLessThan(2000);
    expect(await probe(terminate, false, pg.primary.port)).toMatchObject({ received: 0 }); // what PostgreSQL does
  });

  it('judges a length from its four bytes, not waiting for the rest of the header, and closes on a client that gave up', async () => {
    const short = await probe(Buffer.from([0, 0, 0, 3]), false);
    expect(short).toMatchObject({ received: 0 });
    expect(short.ms).toBeLessThan(2000);
    const abandoned = await probe(Buffer.from([0, 0]), true);
    expect(abandoned).toMatchObject({ received: 0 });
    expect(abandoned.ms).toBeLessThan(2000);
  });
});
