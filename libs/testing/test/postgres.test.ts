// startPostgres: a primary and hot-standby replicas on real streaming replication.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '../src';

jest.setTimeout(120_000);

async function query<T = Record<string, unknown>>(server: PostgresServer, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ host: server.host, port: server.port, user: server.user, database: server.database });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** System V shared memory segment ids, to see that nothing leaks. */
function sharedMemoryIds(): string[] {
  return readFileSync('/proc/sysvipc/shm', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/)[1]).filter(Boolean);
}

describe('startPostgres', () => {
  let cluster: ReplicatedServers<PostgresServer>;

  beforeAll(async () => {
    cluster = await startPostgres({ replicas: 1 });
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('runs a primary and a hot standby replica on their own ports', async () => {
    const { primary, replicas } = cluster;
    expect(primary.port).not.toBe(5432);
    expect(replicas[0].port).not.toBe(primary.port);
    expect(await query(primary, 'SELECT pg_is_in_recovery() AS r')).toEqual([{ r: false }]);
    expect(await query(replicas[0], 'SELECT pg_is_in_recovery() AS r')).toEqual([{ r: true }]);
  });

  it('streams a write on the primary to the replica through a replication slot', async () => {
    const { primary, replicas } = cluster;
    await query(primary, 'CREATE TABLE items (id int PRIMARY KEY, name text)');
    await query(primary, "INSERT INTO items VALUES (1, 'first')");
    await cluster.waitForReplicaCatchUp();
    expect(await query(replicas[0], 'SELECT id, name FROM items')).toEqual([{ id: 1, name: 'first' }]);
    const senders = await query(primary, 'SELECT application_name, state FROM pg_stat_replication');
    expect(senders).toEqual([{ application_name: 'replica1', state: 'streaming' }]);
    const slots = await query(primary, 'SELECT slot_name, active FROM pg_replication_slots');
    expect(slots).toEqual([{ slot_name: 'replica1', active: true }]);
  });

  it('rejects writes on the replica', async () => {
    await expect(query(cluster.replicas[0], "INSERT INTO items VALUES (9, 'no')")).rejects.toThrow(/read-only transaction/);
  });

  it('pauses and resumes WAL replay with plain SQL', async () => {
    const { primary, replicas } = cluster;
    await query(replicas[0], 'SELECT pg_wal_replay_pause()');
    await query(primary, "INSERT INTO items VALUES (2, 'paused')");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await query(replicas[0], 'SELECT count(*)::int AS n FROM items')).toEqual([{ n: 1 }]);
    await query(replicas[0], 'SELECT pg_wal_replay_resume()');
    await cluster.waitForReplicaCatchUp();
    expect(await query(replicas[0], 'SELECT count(*)::int AS n FROM items')).toEqual([{ n: 2 }]);
  });

  it('keeps data across a graceful stop() and start() of the primary on the same port', async () => {
    const { primary, replicas } = cluster;
    const port = primary.port;
    await primary.stop();
    await expect(query(primary, 'SELECT 1')).rejects.toThrow();
    await primary.start();
    expect(primary.port).toBe(port);
    await query(primary, "INSERT INTO items VALUES (3, 'after restart')");
    await cluster.waitForReplicaCatchUp();
    expect(await query(replicas[0], 'SELECT name FROM items WHERE id = 3')).toEqual([{ name: 'after restart' }]);
  });

  it('recovers committed rows after kill() of the primary', async () => {
    const { primary } = cluster;
    await query(primary, "INSERT INTO items VALUES (4, 'before kill')");
    await primary.kill();
    await primary.start();
    expect(await query(primary, 'SELECT name FROM items WHERE id = 4')).toEqual([{ name: 'before kill' }]);
    await cluster.waitForReplicaCatchUp();
  });
});

describe('startPostgres cleanup', () => {
  it('destroy() after kill() deletes the files and leaves no shared memory segment behind', async () => {
    const cluster = await startPostgres({ replicas: 0 });
    const lock = readFileSync(join(cluster.primary.dataDir, 'postmaster.pid'), 'utf8').split('\n')[6].trim().split(/\s+/);
    const shmid = lock[1];
    expect(sharedMemoryIds()).toContain(shmid);
    await cluster.primary.kill();
    await cluster.destroy();
    expect(sharedMemoryIds()).not.toContain(shmid);
    expect(existsSync(cluster.dir)).toBe(false);
  });
});
