// Causal reads (read_consistency = "causal") through mysql-edge beside the real topology service,
// against a real MariaDB primary and GTID replica: a read right after the session's write sees it
// and still runs on the replica once it applied the write (no fixed window), waits on a replica
// whose SQL thread is delayed, goes to the primary when the replica does not catch up in time or
// its SQL thread is stopped, and returns to the replica once it caught up.
import { startMariaDb, type MariaDbServer } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(180_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: { primary: Connection; replica: Connection };
let nextId = 1000;

const connectDirect = (server: MariaDbServer) => createConnection({ host: server.host, port: server.port, user: 'root' });
const outcome = (name: string) => edge.metric('dbproxy_causal_reads_total', { protocol: 'mysql', outcome: name });
const waitsObserved = (name: string) => edge.metric('dbproxy_causal_wait_seconds_count', { protocol: 'mysql', outcome: name });

/** Each server's `app.node` holds its own name (not replicated): a read joining it shows who ran it. */
async function markServer(c: Connection, name: string): Promise<void> {
  await c.query('SET SESSION sql_log_bin = 0');
  await c.query('CREATE TABLE app.node (name VARCHAR(10))');
  await c.query('INSERT INTO app.node VALUES (?)', [name]);
  await c.query('SET SESSION sql_log_bin = 1');
}

/** Writes a new row through `c` and reads it back at once: what the read saw, and which server served it. */
async function writeThenRead(c: Connection, prepared = false): Promise<{ seen: boolean; node: string | undefined }> {
  const id = nextId++;
  await c.query('INSERT INTO items VALUES (?, ?)', [id, `v${id}`]);
  const sql = 'SELECT i.name, n.name AS node FROM items i, node n WHERE i.id = ?';
  const [rows] = prepared ? await c.execute<RowDataPacket[]>(sql, [id]) : await c.query<RowDataPacket[]>(sql, [id]);
  return { seen: rows.length === 1 && rows[0]?.['name'] === `v${id}`, node: rows[0]?.['node'] as string | undefined };
}

/** Topology sees the replica healthy and replicating again (it leaves selection while its SQL thread is stopped). */
async function replicaUsable(): Promise<void> {
  await edge.waitForBackend('replica', (b) => b.healthy === true && b.lagging === false && b.shunned !== true, 'replica back in read selection', 20_000);
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  const replica = db.replicas[0]!;
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' },
      { name: 'replica', host: replica.host, port: replica.port, role: 'replica' },
    ],
    // a window this long would send every read below to the primary: causal mode replaces it
    'read_consistency = "causal"\ncausal_wait_ms = 3000\nread_after_write_seconds = 60',
  );
  direct = { primary: await connectDirect(db.primary), replica: await connectDirect(replica) };
  await direct.primary.query('CREATE DATABASE app');
  await direct.primary.query('CREATE TABLE app.items (id INT PRIMARY KEY, name VARCHAR(40))');
  await db.waitForReplicaCatchUp();
  await markServer(direct.primary, 'primary');
  await markServer(direct.replica, 'replica');
});

afterAll(async () => {
  await direct?.primary.end();
  await direct?.replica.end().catch(() => direct.replica.destroy());
  await edge?.stop();
  await db?.destroy();
});

describe('causal reads on MariaDB', () => {
  it('a read right after the session\'s write sees it, and runs on the replica once it applied the write', async () => {
    const c = await edge.connect({ database: 'app' });
    const before = { now: await outcome('replica_now'), waited: await outcome('replica_after_wait'), primary: await outcome('primary') };
    const nodes: string[] = [];
    for (let i = 0; i < 40; i++) {
      const read = await writeThenRead(c, i % 2 === 1);
      expect(read.seen).toBe(true);
      nodes.push(read.node as string);
    }
    // transactions: the COMMIT's GTID is what the next read waits for
    await c.query('BEGIN');
    await c.query("INSERT INTO items VALUES (1, 'in-tx')");
    await c.query('COMMIT');
    const [tx] = await c.query<RowDataPacket[]>('SELECT i.name, n.name AS node FROM items i, node n WHERE i.id = 1');
    expect(tx[0]?.['name']).toBe('in-tx');
    nodes.push(tx[0]?.['node'] as string);
    await c.end();
    const onReplica = nodes.filter((n) => n === 'replica').length;
    const counted = (await outcome('replica_now')) - before.now + (await outcome('replica_after_wait')) - before.waited;
    // the replica applies a one-row insert within milliseconds: most reads wait briefly or not at all there
    expect(onReplica).toBeGreaterThan(nodes.length / 2);
    expect(counted).toBe(onReplica);
    expect((await outcome('primary')) - before.primary).toBe(nodes.length - onReplica);
  });

  it('waits on a replica whose SQL thread is delayed, and goes to the primary when the wait is shorter than the delay', async () => {
    await direct.replica.query('STOP SLAVE');
    // MASTER_DELAY counts whole seconds from the event's (second-resolution) timestamp: 2 s delays a write by more than 1 s
    await direct.replica.query('CHANGE MASTER TO MASTER_DELAY = 2');
    await direct.replica.query('START SLAVE');
    try {
      await replicaUsable();
      const c = await edge.connect({ database: 'app' });
      const waitedBefore = await waitsObserved('replica_after_wait');
      const slow = await writeThenRead(c);
      expect(slow).toEqual({ seen: true, node: 'replica' });
      expect((await waitsObserved('replica_after_wait')) - waitedBefore).toBe(1);
      expect(await edge.metric('dbproxy_causal_wait_seconds_sum', { protocol: 'mysql', outcome: 'replica_after_wait' })).toBeGreaterThan(0.9);

      await applyMysqlSetting(edge, 'causal_wait_ms', 100);
      const timedOutBefore = await waitsObserved('primary');
      const c2 = await edge.connect({ database: 'app' });
      const fast = await writeThenRead(c2);
      expect(fast).toEqual({ seen: true, node: 'primary' });
      expect((await waitsObserved('primary')) - timedOutBefore).toBe(1);
      await c.end();
      await c2.end();
    } finally {
      await direct.replica.query('STOP SLAVE');
      await direct.replica.query('CHANGE MASTER TO MASTER_DELAY = 0');
      await direct.replica.query('START SLAVE');
      await applyMysqlSetting(edge, 'causal_wait_ms', 3000);
    }
  });

  it('with the replica\'s SQL thread stopped reads go to the primary, and back to the replica after START SLAVE', async () => {
    await db.waitForReplicaCatchUp();
    await replicaUsable();
    const c = await edge.connect({ database: 'app' });
    await direct.replica.query('STOP SLAVE SQL_THREAD');
    try {
      const before = await outcome('primary');
      for (let i = 0; i < 3; i++) expect(await writeThenRead(c)).toEqual({ seen: true, node: 'primary' });
      expect((await outcome('primary')) - before).toBe(3);
    } finally {
      await direct.replica.query('START SLAVE SQL_THREAD');
    }
    await db.waitForReplicaCatchUp();
    await replicaUsable();
    const read = await writeThenRead(c);
    expect(read).toEqual({ seen: true, node: 'replica' });
    await c.end();
  });
});
