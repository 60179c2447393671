import { SpanKind } from '@opentelemetry/api';
// Transparent mode end to end: node-postgres, psql and a raw protocol client through pg-edge (beside
// the real topology service) to a real PostgreSQL primary and streaming replica; startup shard key,
// COPY, LISTEN/NOTIFY, binary values, cancel, replica choice, fallback while the replica is stopped,
// and the session span.
import { Client } from 'pg';
import { processEnvironment } from '@dbproxy/config';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { cancelRequest, errorOf, RawClient, rowsOf } from './raw-client';
import { startEdge, type EdgeHarness } from './harness';
import { run } from './processes';
import { recordSpans } from './span-recorder';

jest.setTimeout(60_000);

const spans = recordSpans();

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;

const client = (port: number, options = '-c dbproxy.shard=eu') =>
  new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', options });

async function withClient<T>(port: number, fn: (c: Client) => Promise<T>, options?: string): Promise<T> {
  const c = client(port, options);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  pg = await startPostgres({ replicas: 1 });
  edge = await startEdge(
    [
      { name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', shard: 's1' },
      { name: 'replica', host: pg.replicas[0].host, port: pg.replicas[0].port, role: 'replica', shard: 's1' },
    ],
    `routing_mode = "transparent"
[postgres.sharding]
enabled = true
default_shard = "s1"
map = { kind = "value", values = { eu = "s1" } }`,
  );
  const setup = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await setup.connect();
  await setup.query('CREATE TABLE items (id int PRIMARY KEY, name text, data bytea)');
  await setup.end();
  await pg.waitForReplicaCatchUp();
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

describe('startup shard key', () => {
  it('reads it from options, strips it, and serves the session on the shard primary', async () => {
    const row = await withClient(edge.rwPort, async (c) => (await c.query("SELECT current_setting('dbproxy.shard', true) AS shard, pg_is_in_recovery() AS ro")).rows[0]);
    expect(row).toEqual({ shard: null, ro: false });
  });

  it('accepts it as its own startup parameter and removes it before forwarding', async () => {
    const raw = await RawClient.connect(edge.rwPort);
    const startup = await raw.startup({ user: 'postgres', database: 'postgres', 'dbproxy.shard': 'eu' });
    expect(startup.at(-1)).toEqual({ type: 'ReadyForQuery', status: 'I' });
    const rows = rowsOf(await raw.query("SELECT current_setting('dbproxy.shard', true)"));
    expect(rows).toEqual([[null]]);
    raw.close();
  });

  it.each<[string, Record<string, string>, string]>([
    ['missing', {}, '08004'],
    ['unmapped', { 'dbproxy.shard': 'mars' }, '3D000'],
  ])('refuses a %s shard value with an ErrorResponse before any backend authentication', async (_what, extra, code) => {
    const raw = await RawClient.connect(edge.rwPort);
    const messages = await raw.startup({ user: 'postgres', database: 'postgres', ...extra });
    expect(messages[0]?.type).toBe('ErrorResponse');
    expect(errorOf(messages)).toMatchObject({ code, severity: 'FATAL' });
    expect(await raw.next()).toBeUndefined();
  });
});

describe('full protocol after startup', () => {
  it('carries COPY FROM STDIN and COPY TO STDOUT (psql)', async () => {
    const env = { ...processEnvironment(), PGOPTIONS: '-c dbproxy.shard=eu', PGCONNECT_TIMEOUT: '5' };
    const args = ['-h', '127.0.0.1', '-p', String(edge.rwPort), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-X', '-q'];
    const input = Array.from({ length: 500 }, (_, i) => `${1000 + i}\tcopied ${i}\t\\\\x${(i % 256).toString(16).padStart(2, '0')}`).join('\n') + '\n';
    const load = await run('psql', [...args, '-c', 'COPY items FROM STDIN'], { input, env });
    expect(load.stderr).toBe('');
    expect(load.status).toBe(0);
    const dump = await run('psql', [...args, '-c', 'COPY (SELECT id, name FROM items WHERE id >= 1000 ORDER BY id) TO STDOUT'], { env });
    expect(dump.status).toBe(0);
    const lines = dump.stdout.trim().split('\n');
    expect(lines).toHaveLength(500);
    expect(lines[499]).toBe('1499\tcopied 499');
  });

  it('delivers LISTEN/NOTIFY between two clients', async () => {
    const listener = client(edge.rwPort);
    const notifier = client(edge.rwPort);
    await Promise.all([listener.connect(), notifier.connect()]);
    const received = new Promise<{ channel: string; payload?: string }>((resolve) => listener.on('notification', resolve));
    await listener.query('LISTEN edge_events');
    await notifier.query("NOTIFY edge_events, 'hello through the proxy'");
    expect(await received).toMatchObject({ channel: 'edge_events', payload: 'hello through the proxy' });
    await Promise.all([listener.end(), notifier.end()]);
  });

  it('passes notices through', async () => {
    await withClient(edge.rwPort, async (c) => {
      const notice = new Promise<string | undefined>((resolve) => c.on('notice', (n) => resolve(n.message)));
      await c.query("DO $$ BEGIN RAISE NOTICE 'careful: %', 42; END $$");
      expect(await notice).toBe('careful: 42');
    });
  });

  it('carries binary parameters and binary results unchanged (extended protocol)', async () => {
    const raw = await RawClient.connect(edge.rwPort);
    await raw.startup({ user: 'postgres', database: 'postgres', options: '-c dbproxy.shard=eu' });
    const int8 = Buffer.alloc(8);
    int8.writeBigInt64BE(-9007199254740993n);
    const bytes = Buffer.from([0, 1, 2, 0xfe, 0xff]);
    raw.send(
      { type: 'Parse', statement: '', sql: 'SELECT $1::int8 AS n, $2::bytea AS b, 1.5::float8 AS f', paramTypes: [20, 17] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [1], params: [int8, bytes], resultFormats: [1] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    const rows = rowsOf(await raw.untilReady());
    expect(rows).toHaveLength(1);
    const [n, b, f] = rows[0];
    expect(n?.readBigInt64BE()).toBe(-9007199254740993n);
    expect(b).toEqual(bytes);
    expect(f?.readDoubleBE()).toBe(1.5);
    raw.close();
  });

  it('holds the backend while a slow client catches up with a large result (backpressure), losing nothing', async () => {
    const raw = await RawClient.connect(edge.rwPort);
    await raw.startup({ user: 'postgres', database: 'postgres', options: '-c dbproxy.shard=eu' });
    raw.socket.pause();
    raw.send({ type: 'Query', sql: "SELECT g, repeat('x', 2000) FROM generate_series(1, 20000) g" });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    raw.socket.resume();
    const rows = rowsOf(await raw.untilReady());
    expect(rows).toHaveLength(20000);
    expect(rows[19999][0]?.toString()).toBe('20000');
    expect(rows.every((r) => r[1]?.length === 2000)).toBe(true);
    raw.close();
  });

  it('cancels pg_sleep(30) from the client side within a second', async () => {
    const c = client(edge.rwPort);
    await c.connect();
    const started = Date.now();
    const sleeping = c.query('SELECT pg_sleep(30)').then(
      () => 'finished',
      (err: { code?: string }) => err.code,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const connection = (c as unknown as { processID: number; secretKey: number });
    await cancelRequest(edge.rwPort, connection.processID, connection.secretKey);
    expect(await sleeping).toBe('57014');
    expect(Date.now() - started).toBeLessThan(1200);
    expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await c.end();
  });
});

describe('read-only listener', () => {
  it('serves from the replica', async () => {
    expect(await withClient(edge.roPort, async (c) => (await c.query('SELECT pg_is_in_recovery() AS ro')).rows[0].ro)).toBe(true);
  });

  it('falls back to the primary while the replica is stopped (fallback_to_primary), and returns to it once it is back', async () => {
    const inRecovery = () => withClient(edge.roPort, async (c) => (await c.query('SELECT pg_is_in_recovery() AS ro')).rows[0].ro as boolean);
    const replica = pg.replicas[0];
    await replica.stop();
    await edge.waitForBackend('replica', (b) => b.healthy === false, 'topology to find the stopped replica down');
    expect(await inRecovery()).toBe(false);
    expect(await edge.metrics()).toMatch(/dbproxy_pg_replica_fallbacks_total\{[^}]*mode="transparent"[^}]*\} [1-9]/);
    await replica.start();
    await edge.waitForBackend('replica', (b) => b.healthy === true, 'topology to find the replica up again', 30_000);
    expect(await inRecovery()).toBe(true);
  });

  it('reports sessions per backend at GET /postgres/backends', async () => {
    const c = client(edge.roPort);
    await c.connect();
    await waitFor(async () => {
      const report = await edge.backends();
      return report.backends.find((b) => b['name'] === 'replica')?.['transparent_sessions'] === 1;
    }, { timeoutMs: 5000, description: 'one session on the replica' });
    const report = await edge.backends();
    expect(report.routing_mode).toBe('transparent');
    expect(report.backends.map((b) => [b['name'], b['role'], b['healthy']])).toEqual([
      ['primary', 'primary', true],
      ['replica', 'replica', true],
    ]);
    await c.end();
  });
});

describe('tracing', () => {
  it('records one span per session naming backend, route, shard and user, and never a statement', async () => {
    spans.reset();
    await withClient(edge.roPort, (c) => c.query("SELECT 'secret-literal-5150' AS v"));
    const span = await waitFor(() => spans.getFinishedSpans().find((s) => s.name.startsWith('SESSION ') && s.kind === SpanKind.SERVER) ?? false, { timeoutMs: 5000, description: 'the session span' });
    expect(span.attributes).toMatchObject({
      'db.system.name': 'postgresql',
      'db.operation.name': 'SESSION',
      'dbproxy.mode': 'transparent',
      'dbproxy.listener': 'read_only',
      'dbproxy.route': 'replica',
      'dbproxy.backend': 'replica',
      'dbproxy.shard': 's1',
      'dbproxy.user': 'postgres',
    });
    expect(span.attributes['dbproxy.connect_ms']).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(span.attributes)).not.toContain('secret-literal');
  });
});
