// [[mysql.fanout]] mode = "xa" against two real MariaDB primaries (the default shard and target s1)
// with the xa-coordinator in the same runtime on the embedded bus (the all-in-one path): a DML
// statement on the fanout table lands on both primaries or on neither (checked on each server
// directly), through mysql2 query/execute and the mariadb CLI; a duplicate key on one participant
// gives the client ERR 1402 with the participant's 1062; no coordinator → ERR, no row anywhere;
// statements inside a client transaction are refused; XA RECOVER is empty on both afterwards; the
// coordinator's xa.execute span continues the edge's span.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { processEnvironment } from '@dbproxy/config';
import { startMariaDb, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { FAULT_ENV, xaCoordinatorService } from '@dbproxy/xa-coordinator';
import { createConnection, type Connection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type BackendSpec, type EdgeHarness } from './harness';

jest.setTimeout(240_000);

const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();

const run = promisify(execFile);

type Db = Awaited<ReturnType<typeof startMariaDb>>;
const SHARDS = ['default', 's1'] as const;
let dbs: Db[] = [];
let direct: Connection[] = [];
let backends: BackendSpec[] = [];
let dir: TempDir;
let edge: EdgeHarness | undefined;

const fanoutToml = (journal: string, seconds = 5) => `
[mysql.xa]
enabled = true
journal_path = "${journal}"
decision_timeout_seconds = ${seconds}
recovery_interval_seconds = 1

[[mysql.fanout]]
name = "ledger"
table = "appdb.ledger"
targets = ["s1"]
mode = "xa"
timeout_seconds = ${seconds}
`;

/** `v` of row `id` on each primary directly: [default, s1]; null where absent. */
async function rowEverywhere(id: number): Promise<(string | null)[]> {
  return Promise.all(
    direct.map(async (c) => {
      const [rows] = await c.query<RowDataPacket[]>('SELECT v FROM appdb.ledger WHERE id = ?', [id]);
      return rows.length === 0 ? null : String(rows[0]?.['v']);
    }),
  );
}

async function xaRecover(): Promise<number[]> {
  return Promise.all(direct.map(async (c) => (await c.query<RowDataPacket[]>('XA RECOVER'))[0].length));
}

async function cli(port: number, sql: string): Promise<{ out: string; code: number }> {
  const args = ['-h', '127.0.0.1', '-P', String(port), '-u', 'app', '-papp-secret', '--ssl=0', '--batch', 'appdb', '-e', sql];
  try {
    const { stdout, stderr } = await run('mariadb', args, { timeout: 30_000 });
    return { out: `${stdout}${stderr}`, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { out: `${e.stdout ?? ''}${e.stderr ?? ''}`, code: e.code ?? 1 };
  }
}

beforeAll(async () => {
  dir = await tmpDir('xa-fanout');
  dbs = await Promise.all(SHARDS.map(() => startMariaDb({ replicas: 0 })));
  direct = await Promise.all(dbs.map((db) => createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' })));
  for (const c of direct) {
    await c.query('CREATE DATABASE appdb');
    await c.query('CREATE TABLE appdb.ledger (id INT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB');
  }
  backends = dbs.map((db, i) => ({ name: `db-${SHARDS[i]}`, host: db.primary.host, port: db.primary.port, role: 'primary' as const, shard: SHARDS[i] }));
});

afterAll(async () => {
  await edge?.stop();
  for (const c of direct) await c.end().catch(() => undefined);
  await Promise.all(dbs.map((db) => db.destroy()));
  await dir?.remove();
});

describe('mode = "xa" without a coordinator', () => {
  it('answers ERR (never OK) and writes nothing anywhere', async () => {
    edge = await startEdge(backends, fanoutToml(join(dir.path, 'unused-journal')));
    const client = await edge.connect({ database: 'appdb' });
    try {
      await expect(client.query("INSERT INTO appdb.ledger VALUES (100, 'lost')")).rejects.toMatchObject({ errno: 1429, sqlState: 'HY000', message: expect.stringContaining('no xa-coordinator serves dbproxy.xa.execute') });
      await expect(client.execute('INSERT INTO appdb.ledger VALUES (?, ?)', [101, 'lost'])).rejects.toMatchObject({ errno: 1429 });
      const viaCli = await cli(edge.rwPort, "INSERT INTO appdb.ledger VALUES (102, 'lost')");
      expect(viaCli.code).not.toBe(0);
      expect(viaCli.out).toContain('ERROR 1429');
      // the session goes on
      const [rows] = await client.query<RowDataPacket[]>('SELECT 1 AS one');
      expect(rows[0]?.['one']).toBe(1);
    } finally {
      await client.end();
    }
    for (const id of [100, 101, 102]) expect(await rowEverywhere(id)).toEqual([null, null]);
    await edge.stop();
    edge = undefined;
  });
});

describe('mode = "xa" with the xa-coordinator in the runtime', () => {
  let client: Connection;

  beforeAll(async () => {
    edge = await startEdge(backends, fanoutToml(join(dir.path, 'journal')), '', '', undefined, { services: [xaCoordinatorService], forget: true });
    client = await edge.connect({ database: 'appdb' });
  });

  afterAll(async () => {
    await client?.end();
    await edge?.stop();
    edge = undefined;
  });

  it('lands INSERT, UPDATE and DELETE sent with query() on both primaries, with the own shard affected rows', async () => {
    const [insert] = await client.query<ResultSetHeader>("INSERT INTO appdb.ledger VALUES (1, 'one')");
    expect(insert.affectedRows).toBe(1);
    expect(await rowEverywhere(1)).toEqual(['one', 'one']);
    const [update] = await client.query<ResultSetHeader>("UPDATE appdb.ledger SET v = 'uno' WHERE id = 1");
    expect(update.affectedRows).toBe(1);
    expect(await rowEverywhere(1)).toEqual(['uno', 'uno']);
    await client.query("INSERT INTO appdb.ledger VALUES (2, 'two')");
    const [del] = await client.query<ResultSetHeader>('DELETE FROM appdb.ledger WHERE id = 2');
    expect(del.affectedRows).toBe(1);
    expect(await rowEverywhere(2)).toEqual([null, null]);
    expect(await edge!.metric('dbproxy_xa_transactions_total', { decision: 'commit' })).toBeGreaterThanOrEqual(4);
  });

  it('sends execute() with its parameters inlined safely (quotes, unicode, NULL)', async () => {
    const tricky = "it's a ';DROP TABLE appdb.ledger; -- ? ü€";
    const [r] = await client.execute<ResultSetHeader>('INSERT INTO appdb.ledger (id, v) VALUES (?, ?)', [3, tricky]);
    expect(r.affectedRows).toBe(1);
    expect(await rowEverywhere(3)).toEqual([tricky, tricky]);
    await client.execute('UPDATE appdb.ledger SET v = ? WHERE id = ?', [null, 3]);
    expect(await rowEverywhere(3)).toEqual(['null', 'null']);
  });

  it('lands what the mariadb CLI sends', async () => {
    const r = await cli(edge!.rwPort, "INSERT INTO appdb.ledger VALUES (4, 'cli')");
    expect(r).toEqual({ out: '', code: 0 });
    expect(await rowEverywhere(4)).toEqual(['cli', 'cli']);
  });

  it('a duplicate key on one participant: the client gets ERR 1402 with the 1062, and neither primary keeps the row', async () => {
    await direct[1]!.query("INSERT INTO appdb.ledger VALUES (10, 'only on s1')");
    const err = await client.query("INSERT INTO appdb.ledger VALUES (10, 'xa')").then(
      () => null,
      (e: unknown) => e as { errno: number; sqlState: string; message: string },
    );
    expect(err).toMatchObject({ errno: 1402, sqlState: 'XA100' });
    expect(err?.message).toContain('shard s1 (db-s1): 1062 (23000)');
    expect(await rowEverywhere(10)).toEqual([null, 'only on s1']);

    await expect(client.execute('INSERT INTO appdb.ledger VALUES (?, ?)', [10, 'xa'])).rejects.toMatchObject({ errno: 1402 });
    const viaCli = await cli(edge!.rwPort, "INSERT INTO appdb.ledger VALUES (10, 'cli')");
    expect(viaCli.out).toContain('ERROR 1402 (XA100)');
    expect(viaCli.out).toContain('1062');
    expect(await rowEverywhere(10)).toEqual([null, 'only on s1']);
    expect(await edge!.metric('dbproxy_xa_transactions_total', { decision: 'rollback' })).toBeGreaterThanOrEqual(3);
  });

  it('refuses the statement inside a client transaction, in a multi-statement request and without a qualified table', async () => {
    await client.query('BEGIN');
    await expect(client.query("INSERT INTO appdb.ledger VALUES (20, 'tx')")).rejects.toMatchObject({ errno: 1399, message: expect.stringContaining('cannot join this transaction') });
    await client.query('ROLLBACK');
    await client.query('SET autocommit = 0');
    await expect(client.execute('INSERT INTO appdb.ledger VALUES (?, ?)', [21, 'tx'])).rejects.toMatchObject({ errno: 1399 });
    await client.query('SET autocommit = 1');
    await expect(client.query("INSERT INTO ledger VALUES (22, 'bare')")).rejects.toMatchObject({ errno: 1235, message: expect.stringContaining('not qualified with its database') });
    const multi = await edge!.connect({ database: 'appdb', multipleStatements: true });
    try {
      await expect(multi.query("INSERT INTO appdb.ledger VALUES (23, 'a'); SELECT 1")).rejects.toMatchObject({ errno: 1235 });
    } finally {
      await multi.end();
    }
    for (const id of [20, 21, 22, 23]) expect(await rowEverywhere(id)).toEqual([null, null]);
    // other tables are untouched by the XA path
    await client.query('CREATE TABLE IF NOT EXISTS appdb.plain (id INT PRIMARY KEY)');
    await client.query('INSERT INTO plain VALUES (1)');
  });

  it('leaves no prepared branch on either primary', async () => {
    expect(await xaRecover()).toEqual([0, 0]);
  });

  it("continues the edge's span into the coordinator's xa.execute span, with a span per participant phase", async () => {
    exporter.reset();
    await client.query("INSERT INTO appdb.ledger VALUES (30, 'traced')");
    const spans = await waitFor(() => {
      const done = exporter.getFinishedSpans();
      const edgeSpan = done.find((s) => s.name === 'INSERT appdb.ledger' && s.attributes['dbproxy.route'] === 'xa');
      const coordinator = done.find((s) => s.name === 'xa.execute');
      const phases = done.filter((s) => s.name.startsWith('XA PREPARE ') || s.name.startsWith('XA COMMIT '));
      return edgeSpan && coordinator && phases.length >= 2 * SHARDS.length ? { edgeSpan, coordinator, phases } : false;
    });
    // XA PREPARE and XA COMMIT per participant, CLIENT spans under the coordinator's span
    for (const phase of spans.phases) expect(phase.parentSpanContext?.spanId).toBe(spans.coordinator.spanContext().spanId);
    expect(spans.phases.map((p) => p.attributes['db.operation.name']).sort()).toEqual([...SHARDS.map(() => 'XA COMMIT'), ...SHARDS.map(() => 'XA PREPARE')]);
    const parentOf = (s: ReadableSpan): string | undefined => (s as unknown as { parentSpanId?: string }).parentSpanId ?? (s as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId;
    expect(spans.coordinator.spanContext().traceId).toBe(spans.edgeSpan.spanContext().traceId);
    expect(parentOf(spans.coordinator)).toBe(spans.edgeSpan.spanContext().spanId);
    expect(spans.edgeSpan.attributes['dbproxy.xa.decision']).toBe('commit');
  });
});

describe('mode = "xa" with a coordinator that stops answering', () => {
  it('gives the client ERR 1180 (never OK) when no answer comes in time; the journal decides, both primaries agree', async () => {
    // the coordinator of this runtime pauses 4 s after journalling its first commit decision; the
    // edge waits timeout_seconds (1) + decision_timeout_seconds (1) for the answer
    // (the runtime reads the process environment: the in-process coordinator arms the hook at start)
    const env = processEnvironment() as Record<string, string | undefined>;
    env[FAULT_ENV] = 'after-decision:1:pause=4000';
    try {
      edge = await startEdge(backends, fanoutToml(join(dir.path, 'journal-slow'), 1), '', '', undefined, { services: [xaCoordinatorService], forget: true });
    } finally {
      delete env[FAULT_ENV];
    }
    const client = await edge.connect({ database: 'appdb' });
    try {
      const started = Date.now();
      await expect(client.query("INSERT INTO appdb.ledger VALUES (40, 'slow')")).rejects.toMatchObject({
        errno: 1180,
        sqlState: 'HY000',
        message: expect.stringContaining('did not answer within 2000 ms'),
      });
      expect(Date.now() - started).toBeLessThan(4000);
      // the decision was journalled before the pause: the coordinator commits everywhere afterwards
      await waitFor(async () => JSON.stringify(await rowEverywhere(40)) === JSON.stringify(['slow', 'slow']), { timeoutMs: 15_000 });
      await waitFor(async () => JSON.stringify(await xaRecover()) === '[0,0]', { timeoutMs: 15_000 });
    } finally {
      await client.end();
    }
  });
});
