// Drains and backend status through pg-edge (beside the real topology service) against real
// PostgreSQL, seen from pg clients and pg_stat_activity: in transaction mode a drained backend's
// idle pooled connections close at once, a pinned transaction keeps its connection until it ends
// and that connection is then closed, never reused; offline_soft lets open transactions finish and
// sends new work elsewhere (or refuses it clearly); offline_hard closes the backend's connections
// now — in session (transparent) mode too. Status changes arrive as new configuration epochs.
import { Client } from 'pg';
import { KvRecords, openRecords } from '@dbproxy/bus';
import { documentHash } from '@dbproxy/runtime';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { primaryAndReplica, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let pg: ReplicatedServers<PostgresServer>;
const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;
const USERS = `[[users]]
name = "app"
password = "app-secret"`;

beforeAll(async () => {
  pg = await startPostgres({ replicas: 1 });
  await requirePoolPassword(pg);
  await direct(pg.primary, 'CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)');
  await direct(pg.primary, 'INSERT INTO t VALUES (1, 0)');
  await pg.waitForReplicaCatchUp();
});

afterAll(async () => {
  await pg?.destroy();
});

async function direct<T = Record<string, unknown>>(server: PostgresServer, sql: string): Promise<T[]> {
  const c = new Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Pids of the edge's connections on a server (the pool role; topology's monitor names itself). */
async function edgePids(server: PostgresServer): Promise<number[]> {
  const rows = await direct<{ pid: number }>(server, `SELECT pid FROM pg_stat_activity WHERE usename = '${POOL_USER}' AND application_name <> 'dbproxy-topology'`);
  return rows.map((r) => r.pid);
}

/** Transaction mode: the edge's own user; session mode: the server's (trust), passed through. */
async function connect(port: number, user: 'app' | 'postgres' = 'app'): Promise<Client> {
  const c = new Client({ host: '127.0.0.1', port, user, ...(user === 'app' ? { password: 'app-secret' } : {}), database: 'postgres' });
  await c.connect();
  return c;
}

const pidOf = async (c: Client): Promise<number> => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const inRecovery = async (c: Client): Promise<boolean> => (await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r;

/** A new configuration epoch with `status` on one backend (as the config API would write it), seen by the edge. */
async function setStatus(edge: EdgeHarness, name: string, status: string): Promise<void> {
  const store = await openRecords(edge.runtime.bus, KvRecords.config);
  const current = await store.get({});
  const document = structuredClone(current?.value?.config as Record<string, unknown>);
  for (const b of document['postgres_backends'] as Record<string, unknown>[]) if (b['name'] === name) b['status'] = status;
  await store.put({}, { config: document, hash: documentHash(document), author: 'test', appliedAt: new Date().toISOString(), comment: `${name} ${status}` }, { expectedRevision: current?.revision ?? 0 });
  await edge.waitForBackend(name, (b) => b['status'] === status, `${name} ${status} in the edge's view`);
}

describe('transaction mode', () => {
  let edge: EdgeHarness;

  beforeAll(async () => {
    edge = await startEdge(primaryAndReplica(pg, backend), 'routing_mode = "transaction"\npool_max_per_backend = 6\nread_after_write_seconds = 0', USERS);
  });

  afterAll(async () => {
    await edge?.stop();
  });

  /** `n` transactions on the primary at once, so its pool holds several connections. */
  async function warmPrimaryPool(n: number): Promise<void> {
    const clients = await Promise.all(Array.from({ length: n }, () => connect(edge.rwPort)));
    await Promise.all(clients.map((c) => c.query('BEGIN')));
    await Promise.all(clients.map((c) => c.query('SELECT pg_sleep(0.1)')));
    await Promise.all(clients.map((c) => c.query('COMMIT')));
    await Promise.all(clients.map((c) => c.end()));
  }

  it("drain: the primary's idle pooled connections close at once; a pinned transaction keeps its connection, which closes when it ends and is never reused", async () => {
    await warmPrimaryPool(4);
    const idle = await edgePids(pg.primary);
    expect(idle.length).toBeGreaterThanOrEqual(2);
    const pinned = await connect(edge.rwPort);
    await pinned.query('BEGIN');
    await pinned.query('UPDATE t SET v = v + 1 WHERE id = 1');
    const pinnedPid = await pidOf(pinned);
    const old = new Set([...idle, pinnedPid]);

    edge.bgdAction({ action: 'drain-backend', backend: 'primary', deadlineMs: 4000 });
    await edge.waitForBackend('primary', (b) => b.draining === true, 'the primary draining');
    await waitFor(async () => (await edgePids(pg.primary)).join() === String(pinnedPid), { timeoutMs: 2000, description: 'only the pinned connection left on the primary' });

    await pinned.query('UPDATE t SET v = v + 1 WHERE id = 1');
    expect(await pidOf(pinned)).toBe(pinnedPid);
    await pinned.query('COMMIT');
    expect((await direct<{ v: number }>(pg.primary, 'SELECT v FROM t WHERE id = 1'))[0]!.v).toBe(2);
    await waitFor(async () => !(await edgePids(pg.primary)).includes(pinnedPid), { timeoutMs: 2000, description: 'the formerly pinned connection closed' });

    const others = await Promise.all(Array.from({ length: 4 }, () => connect(edge.rwPort)));
    for (const c of [pinned, ...others]) {
      await c.query('BEGIN');
      expect(old.has(await pidOf(c))).toBe(false);
    }
    for (const c of [pinned, ...others]) await c.query('COMMIT');
    await Promise.all([pinned, ...others].map((c) => c.end()));
    await edge.waitForBackend('primary', (b) => b.draining === false, 'the drain deadline to pass');
  });

  it("drain: a pinned transaction's connection closes when its client leaves during the drain", async () => {
    const pinned = await connect(edge.rwPort);
    await pinned.query('BEGIN');
    const pid = await pidOf(pinned);
    edge.bgdAction({ action: 'drain-backend', backend: 'primary', deadlineMs: 3000 });
    await edge.waitForBackend('primary', (b) => b.draining === true, 'the primary draining');
    expect(await edgePids(pg.primary)).toEqual([pid]);
    await pinned.end();
    await waitFor(async () => (await edgePids(pg.primary)).length === 0, { timeoutMs: 2000, description: 'the pinned connection closed' });
    await edge.waitForBackend('primary', (b) => b.draining === false, 'the drain deadline to pass');
  });

  it('offline_soft replica: an open read-only transaction there finishes; new reads go to the primary; its pooled connections close', async () => {
    const reader = await connect(edge.roPort);
    await reader.query('BEGIN READ ONLY');
    expect(await inRecovery(reader)).toBe(true);
    await setStatus(edge, 'replica', 'offline_soft');
    expect(await inRecovery(reader)).toBe(true);
    await reader.query('COMMIT');
    expect(await inRecovery(reader)).toBe(false);
    await waitFor(async () => (await edgePids(pg.replicas[0]!)).length === 0, { timeoutMs: 2000, description: 'no pooled connection left on the replica' });
    await setStatus(edge, 'replica', 'online');
    await waitFor(async () => (await inRecovery(reader)) || null, { timeoutMs: 5000, description: 'reads back on the replica' });
    await reader.end();
  });

  it('offline_soft primary: a pinned transaction commits; new writes get the no-backend error', async () => {
    const pinned = await connect(edge.rwPort);
    await pinned.query('BEGIN');
    await pinned.query('UPDATE t SET v = 10 WHERE id = 1');
    const fresh = await connect(edge.rwPort);
    await setStatus(edge, 'primary', 'offline_soft');
    await pinned.query('UPDATE t SET v = v + 1 WHERE id = 1');
    await pinned.query('COMMIT');
    expect((await direct<{ v: number }>(pg.primary, 'SELECT v FROM t WHERE id = 1'))[0]!.v).toBe(11);
    await expect(fresh.query('UPDATE t SET v = 0 WHERE id = 1')).rejects.toMatchObject({ code: '08006', message: expect.stringContaining('no usable primary backend') });
    await setStatus(edge, 'primary', 'online');
    await Promise.all([pinned.end(), fresh.end().catch(() => undefined)]);
    const again = await connect(edge.rwPort);
    await again.query('UPDATE t SET v = 0 WHERE id = 1');
    await again.end();
  });

  it('offline_hard primary: its pooled connections close now and the pinned transaction fails; back online it serves', async () => {
    await warmPrimaryPool(3);
    const pinned = await connect(edge.rwPort);
    const told: Error[] = [];
    pinned.on('error', (err) => told.push(err));
    await pinned.query('BEGIN');
    await pinned.query('UPDATE t SET v = 99 WHERE id = 1');
    expect((await edgePids(pg.primary)).length).toBeGreaterThanOrEqual(2);
    await setStatus(edge, 'primary', 'offline_hard');
    await waitFor(async () => (await edgePids(pg.primary)).length === 0, { timeoutMs: 2000, description: 'every pooled connection on the primary closed' });
    expect((await direct<{ v: number }>(pg.primary, 'SELECT v FROM t WHERE id = 1'))[0]!.v).toBe(0);
    // told at once, in its protocol (FATAL 08006), not at its next query's deadline: the transaction went with its connection
    await waitFor(() => told.length > 0 || null, { timeoutMs: 2000, description: 'the pinned client told' });
    expect(told[0]).toMatchObject({ code: '08006', message: expect.stringContaining('transaction was lost') });
    await expect(pinned.query('UPDATE t SET v = v + 1 WHERE id = 1')).rejects.toThrow();
    await setStatus(edge, 'primary', 'online');
    await edge.waitForBackend('primary', (b) => b.healthy === true, 'the primary usable');
    const fresh = await connect(edge.rwPort);
    await fresh.query('UPDATE t SET v = 1 WHERE id = 1');
    await fresh.end();
    await pinned.end().catch(() => undefined);
  });
});

describe('session (transparent) mode', () => {
  let edge: EdgeHarness;

  beforeAll(async () => {
    edge = await startEdge(primaryAndReplica(pg, backend), 'routing_mode = "transparent"\nread_after_write_seconds = 0', USERS);
  });

  afterAll(async () => {
    await edge?.stop();
  });

  /** Clients' sessions on a server (they log in as postgres, as this check does: it leaves itself out). */
  const sessionPids = async (server: PostgresServer) =>
    (await direct<{ pid: number }>(server, "SELECT pid FROM pg_stat_activity WHERE usename = 'postgres' AND backend_type = 'client backend' AND pid <> pg_backend_pid()")).map((r) => r.pid);

  it('offline_soft replica: an existing session keeps its replica; new read-only sessions go to the primary', async () => {
    const existing = await connect(edge.roPort, 'postgres');
    expect(await inRecovery(existing)).toBe(true);
    await setStatus(edge, 'replica', 'offline_soft');
    expect(await inRecovery(existing)).toBe(true);
    const fresh = await connect(edge.roPort, 'postgres');
    expect(await inRecovery(fresh)).toBe(false);
    await Promise.all([existing.end(), fresh.end()]);
    await setStatus(edge, 'replica', 'online');
  });

  it('offline_hard replica: its sessions are closed now; new read-only sessions go to the primary', async () => {
    const existing = await connect(edge.roPort, 'postgres');
    const closed = new Promise<void>((resolve) => existing.once('end', () => resolve()));
    existing.on('error', () => undefined);
    expect(await inRecovery(existing)).toBe(true);
    expect((await sessionPids(pg.replicas[0]!)).length).toBe(1);
    await setStatus(edge, 'replica', 'offline_hard');
    await closed;
    await waitFor(async () => (await sessionPids(pg.replicas[0]!)).length === 0, { timeoutMs: 2000, description: 'the session on the replica closed' });
    const fresh = await connect(edge.roPort, 'postgres');
    expect(await inRecovery(fresh)).toBe(false);
    await fresh.end();
    await setStatus(edge, 'replica', 'online');
  });
});
