// Causal reads (read_consistency = "causal") in transaction mode against a real PostgreSQL primary
// and streaming replica: a read right after the session's committed write sees it and still runs
// on the replica once it replayed the write (no fixed window); with the replica's replay paused it
// waits and goes to the primary; replay resumed during the wait, it runs on the replica.
import { Client } from 'pg';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { primaryAndReplica, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
let replicaAdmin: Client;
let nextId = 100;
const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;

const outcome = (name: string) => edge.metric('dbproxy_causal_reads_total', { protocol: 'pg', outcome: name });
const waitsObserved = (name: string) => edge.metric('dbproxy_causal_wait_seconds_count', { protocol: 'pg', outcome: name });

const connect = async (): Promise<Client> => {
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'postgres' });
  await c.connect();
  return c;
};

/** Writes a row through `c` (in a transaction when asked) and reads it back at once: what the read saw, and whether a replica (read-only) served it. */
async function writeThenRead(c: Client, inTransaction = false): Promise<{ seen: boolean; on: 'replica' | 'primary' }> {
  const id = nextId++;
  if (inTransaction) await c.query('BEGIN');
  await c.query('INSERT INTO acc VALUES ($1, $2)', [id, id * 10]);
  if (inTransaction) await c.query('COMMIT');
  const { rows } = await c.query("SELECT v, current_setting('transaction_read_only') AS ro FROM acc WHERE id = $1", [id]);
  return { seen: rows.length === 1 && rows[0].v === id * 10, on: rows[0]?.ro === 'on' ? 'replica' : 'primary' };
}

/** Topology sees the replica healthy and not lagging (it leaves selection while replay is paused long enough). */
async function replicaInSelection(): Promise<void> {
  await edge.waitForBackend('replica', (b) => b.healthy === true && b.lagging === false, 'replica in read selection', 20_000);
}

beforeAll(async () => {
  pg = await startPostgres({ replicas: 1 });
  await requirePoolPassword(pg);
  edge = await startEdge(
    primaryAndReplica(pg, backend),
    // a window this long would send every read below to the primary: causal mode replaces it
    'routing_mode = "transaction"\nread_consistency = "causal"\ncausal_wait_ms = 1500\nread_after_write_seconds = 60\nallowed_functions = ["current_setting"]',
    '[[users]]\nname = "app"\npassword = "app-secret"',
  );
  const setup = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await setup.connect();
  await setup.query('CREATE TABLE acc (id int PRIMARY KEY, v int)');
  await setup.query('GRANT ALL ON acc TO ' + POOL_USER);
  await setup.end();
  await pg.waitForReplicaCatchUp();
  const replica = pg.replicas[0] as PostgresServer;
  replicaAdmin = new Client({ host: replica.host, port: replica.port, user: 'postgres', database: 'postgres' });
  await replicaAdmin.connect();
  await replicaInSelection();
});

afterAll(async () => {
  await replicaAdmin?.query('SELECT pg_wal_replay_resume()').catch(() => undefined);
  await replicaAdmin?.end();
  await edge?.stop();
  await pg?.destroy();
});

describe('causal reads on PostgreSQL (transaction mode)', () => {
  it('a read right after the session\'s committed write sees it, and runs on the replica once it replayed the write', async () => {
    const c = await connect();
    const before = { now: await outcome('replica_now'), waited: await outcome('replica_after_wait'), primary: await outcome('primary') };
    const reads: string[] = [];
    for (let i = 0; i < 30; i++) {
      const read = await writeThenRead(c, i % 3 === 0);
      expect(read.seen).toBe(true);
      reads.push(read.on);
    }
    await c.end();
    const onReplica = reads.filter((on) => on === 'replica').length;
    expect(onReplica).toBeGreaterThan(reads.length / 2);
    expect((await outcome('replica_now')) - before.now + (await outcome('replica_after_wait')) - before.waited).toBe(onReplica);
    expect((await outcome('primary')) - before.primary).toBe(reads.length - onReplica);
  });

  it('with replay paused on the replica the read waits causal_wait_ms, then the primary serves it', async () => {
    const c = await connect();
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    try {
      const before = { waits: await waitsObserved('primary'), primary: await outcome('primary') };
      const started = performance.now();
      expect(await writeThenRead(c)).toEqual({ seen: true, on: 'primary' });
      const elapsed = performance.now() - started;
      expect((await outcome('primary')) - before.primary).toBe(1);
      // topology takes a paused replica out of selection at its next check (0.3 s): a read after that
      // goes to the primary at once; one before it waits the whole causal_wait_ms on the replica
      const waited = (await waitsObserved('primary')) - before.waits;
      expect(waited === 1 ? elapsed > 1000 : waited === 0).toBe(true);
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
    }
    await c.end();
  });

  it('replay resumed while the read waits: the replica serves it after the wait', async () => {
    const c = await connect();
    await pg.waitForReplicaCatchUp();
    await replicaInSelection();
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    const resume = new Promise((resolve) => setTimeout(resolve, 300)).then(() => replicaAdmin.query('SELECT pg_wal_replay_resume()'));
    const before = await waitsObserved('replica_after_wait');
    try {
      expect(await writeThenRead(c)).toEqual({ seen: true, on: 'replica' });
      expect((await waitsObserved('replica_after_wait')) - before).toBe(1);
      expect(await edge.metric('dbproxy_causal_wait_seconds_sum', { protocol: 'pg', outcome: 'replica_after_wait' })).toBeGreaterThan(0.2);
    } finally {
      await resume;
    }
    await c.end();
  });
});
