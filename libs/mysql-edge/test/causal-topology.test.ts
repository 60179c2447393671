// Causal reads with replica positions from topology's health checks (gtid_current_pos in every
// check's report), on a real MariaDB primary and two GTID replicas: once topology has seen a
// replica apply the session's write, the read goes to that replica at once, without a
// MASTER_GTID_WAIT round trip, and is preferred over a replica that has not applied it (one whose
// SQL thread is delayed, or stopped). Each replica's general log shows whether the edge waited.
import { Subjects, subscribeMessages, type HealthReport, type Subscription } from '@dbproxy/bus';
import { startMariaDb, waitFor, type MariaDbServer } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { parseGtids, reaches } from '../src/causal/gtid-position';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(180_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let primary: Connection;
let fast: Connection;
let slow: Connection;
let reports: Subscription;
const latest = new Map<string, HealthReport[]>();
let nextId = 1000;

const connectDirect = (server: MariaDbServer) => createConnection({ host: server.host, port: server.port, user: 'root' });
const outcome = (name: string) => edge.metric('dbproxy_causal_reads_total', { protocol: 'mysql', outcome: name });

/** Each server's `app.node` holds its own name (not replicated): a read joining it shows who ran it. */
async function markServer(c: Connection, name: string): Promise<void> {
  await c.query('SET SESSION sql_log_bin = 0');
  await c.query('CREATE TABLE app.node (name VARCHAR(10))');
  await c.query('INSERT INTO app.node VALUES (?)', [name]);
  await c.query('SET SESSION sql_log_bin = 1');
}

/** The edge's MASTER_GTID_WAIT preludes a replica ran since its general log was last emptied (the pattern keeps this query and the test's own catch-up waits out of the count). */
async function gtidWaits(c: Connection): Promise<number> {
  const [rows] = await c.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM mysql.general_log WHERE argument LIKE CONCAT('%FROM DUAL WHERE MASTER', '_GTID', '_WAIT(%')");
  return Number(rows[0]?.['n']);
}

/** Two health reports of `backend` (so the edge, on the same bus, has had one too) whose position includes the primary's current GTIDs. */
async function topologySaw(backend: string): Promise<void> {
  const [rows] = await primary.query<RowDataPacket[]>('SELECT @@gtid_binlog_pos AS pos');
  const target = parseGtids(String(rows[0]?.['pos']));
  latest.set(backend, []);
  await waitFor(() => (latest.get(backend) ?? []).filter((r) => r.position !== null && reaches(parseGtids(r.position), target)).length >= 2, { timeoutMs: 10_000, description: `topology reports ${backend} caught up` });
}

/** Writes a row through the edge, waits until topology reported `caughtUp` has it, then reads it back through the edge. */
async function writeSeenThenRead(c: Connection, caughtUp: string): Promise<{ seen: boolean; node: string | undefined }> {
  const id = nextId++;
  await c.query('INSERT INTO items VALUES (?, ?)', [id, `v${id}`]);
  await topologySaw(caughtUp);
  const [rows] = await c.query<RowDataPacket[]>('SELECT i.name, n.name AS node FROM items i, node n WHERE i.id = ?', [id]);
  return { seen: rows.length === 1 && rows[0]?.['name'] === `v${id}`, node: rows[0]?.['node'] as string | undefined };
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 2 });
  const [r1, r2] = db.replicas as [MariaDbServer, MariaDbServer];
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' },
      { name: 'fast', host: r1.host, port: r1.port, role: 'replica' },
      { name: 'slow', host: r2.host, port: r2.port, role: 'replica' },
    ],
    // a long window would send every read to the primary; a delayed replica stays in selection
    'read_consistency = "causal"\ncausal_wait_ms = 2000\nread_after_write_seconds = 60\nmax_replica_lag_seconds = 3600',
  );
  reports = subscribeMessages(edge.runtime.bus, Subjects.health.pattern({ protocol: 'mysql' }), (r) => void latest.get(r.backend)?.push(r));
  primary = await connectDirect(db.primary);
  fast = await connectDirect(r1);
  slow = await connectDirect(r2);
  await primary.query('CREATE DATABASE app');
  await primary.query('CREATE TABLE app.items (id INT PRIMARY KEY, name VARCHAR(40))');
  await db.waitForReplicaCatchUp();
  await markServer(primary, 'primary');
  await markServer(fast, 'fast');
  await markServer(slow, 'slow');
  for (const c of [fast, slow]) {
    await c.query("SET GLOBAL log_output = 'TABLE'");
    await c.query('SET GLOBAL general_log = 1');
  }
});

afterAll(async () => {
  reports?.unsubscribe();
  for (const c of [primary, fast, slow]) await c?.end().catch(() => c.destroy());
  await edge?.stop();
  await db?.destroy();
});

beforeEach(async () => {
  for (const c of [fast, slow]) await c.query('TRUNCATE mysql.general_log');
});

describe('causal reads with replica positions from topology', () => {
  it('prefers the replica topology saw apply the write over a delayed one, and reads there without waiting', async () => {
    await slow.query('STOP SLAVE');
    await slow.query('CHANGE MASTER TO MASTER_DELAY = 60');
    await slow.query('START SLAVE');
    try {
      await edge.waitForBackend('slow', (b) => b.healthy === true && b.lagging === false, 'delayed replica in read selection', 20_000);
      const c = await edge.connect({ database: 'app' });
      const before = { now: await outcome('replica_now'), waited: await outcome('replica_after_wait'), primary: await outcome('primary') };
      for (let i = 0; i < 8; i++) expect(await writeSeenThenRead(c, 'fast')).toEqual({ seen: true, node: 'fast' });
      await c.end();
      expect((await outcome('replica_now')) - before.now).toBe(8);
      expect((await outcome('replica_after_wait')) - before.waited).toBe(0);
      expect((await outcome('primary')) - before.primary).toBe(0);
      // no round trip: neither replica was asked to wait
      expect(await gtidWaits(fast)).toBe(0);
      expect(await gtidWaits(slow)).toBe(0);
    } finally {
      await slow.query('STOP SLAVE');
      await slow.query('CHANGE MASTER TO MASTER_DELAY = 0');
      await slow.query('START SLAVE');
    }
  });

  it('with one replica\'s SQL thread stopped, a read goes at once to the replica topology saw caught up', async () => {
    await db.waitForReplicaCatchUp();
    await slow.query('STOP SLAVE SQL_THREAD');
    try {
      const c = await edge.connect({ database: 'app' });
      const before = await outcome('replica_now');
      for (let i = 0; i < 5; i++) expect(await writeSeenThenRead(c, 'fast')).toEqual({ seen: true, node: 'fast' });
      await c.end();
      expect((await outcome('replica_now')) - before).toBe(5);
      expect(await gtidWaits(fast)).toBe(0);
    } finally {
      await slow.query('START SLAVE SQL_THREAD');
    }
  });

  it('reads right after writes, before a check can have seen them, still wait on a replica and see the writes', async () => {
    await db.waitForReplicaCatchUp();
    const c = await edge.connect({ database: 'app' });
    for (let i = 0; i < 5; i++) {
      const id = nextId++;
      await c.query('INSERT INTO items VALUES (?, ?)', [id, `v${id}`]);
      const [rows] = await c.query<RowDataPacket[]>('SELECT name FROM items WHERE id = ?', [id]);
      expect(rows[0]?.['name']).toBe(`v${id}`);
    }
    await c.end();
    // a check lands between a write and its read only rarely (milliseconds in every 0.3 s)
    expect((await gtidWaits(fast)) + (await gtidWaits(slow))).toBeGreaterThanOrEqual(3);
  });
});
