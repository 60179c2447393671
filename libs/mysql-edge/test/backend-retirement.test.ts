// Drains and backend status through mysql-edge (beside the real topology service) against real
// MariaDB, seen from mysql2 clients and from the servers' processlist: a drained backend's idle
// connections close at once, a pinned session keeps its connection until it ends and that
// connection is then closed, never reused; offline_soft lets existing sessions finish and sends new
// work elsewhere (or refuses it clearly); offline_hard closes the backend's connections now. Status
// changes arrive as new configuration epochs.
import { KvRecords, openRecords } from '@dbproxy/bus';
import { documentHash } from '@dbproxy/runtime';
import { startMariaDb, waitFor } from '@dbproxy/testing';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { closeDirect, openDirect, startEdge, type DirectConnections, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: DirectConnections;

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  const replica = db.replicas[0]!;
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' },
      { name: 'replica', host: replica.host, port: replica.port, role: 'replica' },
    ],
    'pool_max_per_backend = 6\nread_after_write_seconds = 0',
  );
  direct = await openDirect(db, ['CREATE DATABASE app', 'CREATE TABLE app.t (id INT PRIMARY KEY, v INT)', 'INSERT INTO app.t VALUES (1, 0)']);
});

afterAll(async () => {
  await closeDirect(direct);
  await edge?.stop();
  await db?.destroy();
});

/** Thread ids of the edge's connections on a server (they run in database `app`; ours have none). */
async function edgeThreads(server: Connection): Promise<number[]> {
  const [rows] = await server.query<RowDataPacket[]>("SELECT id FROM information_schema.processlist WHERE user = 'root' AND db = 'app'");
  return rows.map((r) => Number(r['id']));
}

async function connectionId(c: Connection): Promise<number> {
  const [[row]] = await c.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  return Number(row?.['id']);
}

/** Opens `n` sessions and runs a statement on the primary on each at once, so its pool holds several connections. */
async function warmPool(n: number): Promise<void> {
  const sessions = await Promise.all(Array.from({ length: n }, () => edge.connect({ database: 'app' })));
  await Promise.all(sessions.map((s) => s.query('DO SLEEP(0.2)')));
  await Promise.all(sessions.map((s) => s.end()));
}

/** A new configuration epoch with `status` on one backend (as the config API would write it), seen by the edge's topology view. */
async function setStatus(name: string, status: string): Promise<void> {
  const store = await openRecords(edge.runtime.bus, KvRecords.config);
  const current = await store.get({});
  const document = structuredClone(current?.value?.config as Record<string, unknown>);
  const backends = document['mysql_backends'] as Record<string, unknown>[];
  for (const b of backends) if (b['name'] === name) b['status'] = status;
  await store.put({}, { config: document, hash: documentHash(document), author: 'test', appliedAt: new Date().toISOString(), comment: `${name} ${status}` }, { expectedRevision: current?.revision ?? 0 });
  await edge.waitForBackend(name, (b) => b['status'] === status, `${name} ${status} in the edge's view`);
}

describe('drain-backend (retire-on-release)', () => {
  it("closes the drained backend's idle connections at once; a pinned session keeps working, its connection closes when the pin ends and is never reused", async () => {
    await warmPool(4);
    const idleBefore = await edgeThreads(direct.primary);
    expect(idleBefore.length).toBeGreaterThanOrEqual(2);

    // a writing transaction (its connection needs a reset afterwards) and a reading one (it ends clean:
    // the edge would keep such a connection for the session's next statement, or hand it to another)
    const pinned = await edge.connect({ database: 'app' });
    await pinned.query('BEGIN');
    await pinned.query('UPDATE t SET v = v + 1 WHERE id = 1');
    const pinnedThread = await connectionId(pinned);
    const reading = await edge.connect({ database: 'app' });
    await reading.query('BEGIN');
    await reading.query('SELECT v FROM t WHERE id = 1');
    const readingThread = await connectionId(reading);
    const old = new Set([...idleBefore, pinnedThread, readingThread]);

    edge.bgdAction({ action: 'drain-backend', backend: 'primary', deadlineMs: 4000 });
    await edge.waitForBackend('primary', (b) => b.draining === true, 'the primary draining');
    // idle ones close at once: only the pinned session's connection is left on the server
    await waitFor(async () => {
      const threads = (await edgeThreads(direct.primary)).sort();
      return threads.join() === [pinnedThread, readingThread].sort().join();
    }, { timeoutMs: 2000, description: 'only the pinned connections left on the primary' });

    // the reading transaction goes on on its connection and ends; that connection is closed, not kept
    expect(await connectionId(reading)).toBe(readingThread);
    await reading.query('COMMIT');
    // at once (not after the edge's one-second sweep of connections kept between statements)
    expect(old.has(await connectionId(reading))).toBe(false);
    await waitFor(async () => !(await edgeThreads(direct.primary)).includes(readingThread), { timeoutMs: 500, description: "the reading transaction's connection closed" });

    // the pinned session goes on on its own connection
    await pinned.query('UPDATE t SET v = v + 1 WHERE id = 1');
    expect(await connectionId(pinned)).toBe(pinnedThread);
    await pinned.query('COMMIT');
    const [[row]] = await direct.primary.query<RowDataPacket[]>('SELECT v FROM app.t WHERE id = 1');
    expect(row?.['v']).toBe(2);

    // the pin ended: its connection is closed, not kept for the session nor handed to another
    await waitFor(async () => !(await edgeThreads(direct.primary)).includes(pinnedThread), { timeoutMs: 2000, description: 'the formerly pinned connection closed on the primary' });
    expect(old.has(await connectionId(pinned))).toBe(false);
    const others = await Promise.all(Array.from({ length: 4 }, () => edge.connect({ database: 'app' })));
    for (const id of await Promise.all(others.map((c) => connectionId(c)))) expect(old.has(id)).toBe(false);
    await Promise.all([...others, pinned, reading].map((c) => c.end()));
    await edge.waitForBackend('primary', (b) => b.draining === false, 'the drain deadline to pass');
  });

  it("closes a pinned session's connection when the session ends during the drain", async () => {
    const pinned = await edge.connect({ database: 'app' });
    await pinned.query('BEGIN');
    const thread = await connectionId(pinned);
    edge.bgdAction({ action: 'drain-backend', backend: 'primary', deadlineMs: 3000 });
    await edge.waitForBackend('primary', (b) => b.draining === true, 'the primary draining');
    await pinned.query('SELECT * FROM t FOR UPDATE');
    expect((await edgeThreads(direct.primary)).includes(thread)).toBe(true);
    await pinned.end();
    await waitFor(async () => !(await edgeThreads(direct.primary)).includes(thread), { timeoutMs: 2000, description: 'the pinned connection closed when its session ended' });
    const next = await edge.connect({ database: 'app' });
    expect(await connectionId(next)).not.toBe(thread);
    await next.end();
    await edge.waitForBackend('primary', (b) => b.draining === false, 'the drain deadline to pass');
  });
});

describe('backend status', () => {
  it('offline_soft replica: an open transaction there finishes, new reads go to the primary, pooled connections close', async () => {
    const ro = await edge.connect({ port: edge.roPort, database: 'app' });
    const servedBy = async (c: Connection) => Number((await c.query<RowDataPacket[]>('SELECT @@server_id AS id'))[0][0]?.['id']);
    expect(await servedBy(ro)).toBe(db.replicas[0]!.serverId);
    const reader = await edge.connect({ port: edge.roPort, database: 'app' });
    await reader.query('START TRANSACTION READ ONLY');
    expect(await servedBy(reader)).toBe(db.replicas[0]!.serverId);
    const readerThread = await connectionId(reader);

    await setStatus('replica', 'offline_soft');
    // the open transaction finishes where it started
    expect(await servedBy(reader)).toBe(db.replicas[0]!.serverId);
    expect(await connectionId(reader)).toBe(readerThread);
    await reader.query('COMMIT');
    // new work goes to the primary; the replica keeps no connection of the edge
    expect(await servedBy(ro)).toBe(db.primary.serverId);
    expect(await servedBy(reader)).toBe(db.primary.serverId);
    await waitFor(async () => (await edgeThreads(direct.replica)).length === 0, { timeoutMs: 2000, description: 'no edge connection left on the replica' });

    await setStatus('replica', 'online');
    await waitFor(async () => (await servedBy(ro)) === db.replicas[0]!.serverId || null, { timeoutMs: 5000, description: 'reads back on the replica' });
    await Promise.all([ro.end(), reader.end()]);
  });

  it('offline_soft primary: a pinned transaction commits; new statements get the no-backend error naming the status', async () => {
    const pinned = await edge.connect({ database: 'app' });
    await pinned.query('BEGIN');
    await pinned.query('UPDATE t SET v = 10 WHERE id = 1');
    const fresh = await edge.connect({ database: 'app' });

    await setStatus('primary', 'offline_soft');
    await pinned.query('UPDATE t SET v = v + 1 WHERE id = 1');
    await pinned.query('COMMIT');
    const [[row]] = await direct.primary.query<RowDataPacket[]>('SELECT v FROM app.t WHERE id = 1');
    expect(row?.['v']).toBe(11);
    await expect(fresh.query('UPDATE t SET v = 0 WHERE id = 1')).rejects.toMatchObject({ errno: 1429, message: expect.stringContaining('backend "primary" is offline_soft') });
    await expect(pinned.query('UPDATE t SET v = 0 WHERE id = 1')).rejects.toMatchObject({ errno: 1429 });

    await setStatus('primary', 'online');
    await fresh.query('UPDATE t SET v = 0 WHERE id = 1');
    await Promise.all([pinned.end(), fresh.end()]);
  });

  it("offline_hard primary: its connections close now, a pinned session is told at once; back online it serves again", async () => {
    await warmPool(3);
    const pinned = await edge.connect({ database: 'app' });
    await pinned.query('BEGIN');
    await pinned.query('UPDATE t SET v = 99 WHERE id = 1');
    const thread = await connectionId(pinned);
    const errors: unknown[] = [];
    pinned.on('error', (err) => errors.push(err));
    expect((await edgeThreads(direct.primary)).length).toBeGreaterThanOrEqual(2);

    await setStatus('primary', 'offline_hard');
    await waitFor(async () => (await edgeThreads(direct.primary)).length === 0, { timeoutMs: 2000, description: 'every edge connection on the primary closed' });
    // the open transaction was rolled back by the server when its connection closed
    const [[row]] = await direct.primary.query<RowDataPacket[]>('SELECT v FROM app.t WHERE id = 1');
    expect(row?.['v']).toBe(0);
    await waitFor(() => errors.length > 0 || null, { timeoutMs: 2000, description: 'the pinned client told' });
    expect(String((errors[0] as Error).message)).toContain('offline_hard');
    expect(thread).toBeGreaterThan(0);

    const fresh = await edge.connect({ database: 'app' });
    await expect(fresh.query('UPDATE t SET v = 1 WHERE id = 1')).rejects.toMatchObject({ errno: 1429, message: expect.stringContaining('backend "primary" is offline_hard') });
    await setStatus('primary', 'online');
    await edge.waitForBackend('primary', (b) => b.healthy === true, 'the primary usable');
    await fresh.query('UPDATE t SET v = 1 WHERE id = 1');
    const [[again]] = await direct.primary.query<RowDataPacket[]>('SELECT v FROM app.t WHERE id = 1');
    expect(again?.['v']).toBe(1);
    await fresh.end();
    pinned.destroy();
  });
});
