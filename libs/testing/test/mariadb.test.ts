// startMariaDb: a primary and replicas on real GTID replication, on their own ports and files.
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startMariaDb, type MariaDbServer, type ReplicatedServers } from '../src';

jest.setTimeout(120_000);

async function connect(server: MariaDbServer): Promise<Connection> {
  return createConnection({ host: server.host, port: server.port, user: server.user, password: server.password });
}

async function query(server: MariaDbServer, sql: string): Promise<RowDataPacket[]> {
  const connection = await connect(server);
  try {
    return (await connection.query<RowDataPacket[]>(sql))[0];
  } finally {
    await connection.end();
  }
}

describe('startMariaDb', () => {
  let cluster: ReplicatedServers<MariaDbServer>;

  beforeAll(async () => {
    cluster = await startMariaDb({ replicas: 1, serverIdBase: 10, settings: { 'max-connections': '77' } });
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('starts a primary and a replica in a fresh dbproxy-test- directory with distinct server ids', async () => {
    const { primary, replicas } = cluster;
    expect(cluster.dir.startsWith(`${tmpdir()}/dbproxy-test-`)).toBe(true);
    expect(primary.dataDir.startsWith(cluster.dir)).toBe(true);
    expect(replicas).toHaveLength(1);
    expect(primary.port).not.toBe(replicas[0].port);
    expect(primary.port).not.toBe(3306);
    const [p] = await query(primary, 'SELECT @@server_id AS id, @@log_bin AS logBin, @@read_only AS ro');
    const [r] = await query(replicas[0], 'SELECT @@server_id AS id, @@read_only AS ro');
    expect(p).toMatchObject({ id: 10, logBin: 1, ro: 0 });
    expect(r).toMatchObject({ id: 11, ro: 1 });
  });

  it('applies the caller\'s server settings to every member, and refuses a malformed option name', async () => {
    for (const server of [cluster.primary, ...cluster.replicas]) expect(await query(server, 'SELECT @@max_connections AS n')).toEqual([{ n: 77 }]);
    await expect(startMariaDb({ replicas: 0, settings: { '--init-file=/tmp/x': '1' } })).rejects.toThrow(/option names/);
  });

  it('replicates a row written on the primary to the replica using GTIDs', async () => {
    const { primary, replicas } = cluster;
    await query(primary, 'CREATE DATABASE IF NOT EXISTS app');
    await query(primary, 'CREATE TABLE app.items (id INT PRIMARY KEY, name VARCHAR(20))');
    await query(primary, "INSERT INTO app.items VALUES (1, 'first')");
    await cluster.waitForReplicaCatchUp();
    expect(await query(replicas[0], 'SELECT id, name FROM app.items')).toEqual([{ id: 1, name: 'first' }]);
    const [status] = await query(replicas[0], 'SHOW SLAVE STATUS');
    expect(status).toMatchObject({ Using_Gtid: 'Slave_Pos', Master_Port: primary.port, Master_User: 'repl' });
  });

  it('keeps data across stop() and start() on the same port, and the replica catches up again', async () => {
    const { primary, replicas } = cluster;
    const port = primary.port;
    await primary.stop();
    expect(primary.pid).toBeUndefined();
    await expect(query(primary, 'SELECT 1')).rejects.toThrow();
    await primary.start();
    expect(primary.port).toBe(port);
    await query(primary, "INSERT INTO app.items VALUES (2, 'after restart')");
    await cluster.waitForReplicaCatchUp();
    expect(await query(replicas[0], 'SELECT id FROM app.items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('survives kill() of the replica and resumes replication on start()', async () => {
    const { primary, replicas } = cluster;
    await replicas[0].kill();
    await query(primary, "INSERT INTO app.items VALUES (3, 'while replica down')");
    await replicas[0].start();
    await cluster.waitForReplicaCatchUp();
    expect(await query(replicas[0], 'SELECT name FROM app.items WHERE id = 3')).toEqual([{ name: 'while replica down' }]);
  });

  it('keeps its temporary files in its own directory and leaves the machine\'s #sql files alone when it starts', async () => {
    // mariadbd deletes every #sql* file in its tmpdir on start: in a shared /tmp those are the
    // machine's MariaDB's in-use temporary tables.
    const probe = join(tmpdir(), `#sql-temptable-dbproxy-probe-${process.pid}.MAI`);
    await writeFile(probe, '');
    try {
      const { primary } = cluster;
      await primary.stop();
      await primary.start();
      expect(existsSync(probe)).toBe(true);
      const [row] = await query(primary, 'SELECT @@tmpdir AS dir');
      expect(String(row.dir).startsWith(cluster.dir)).toBe(true);
    } finally {
      await rm(probe, { force: true });
    }
  });

  it('reports its log file, which holds the server output', () => {
    expect(cluster.primary.logTail()).toMatch(/ready for connections/);
  });
});

describe('startMariaDb with two replicas', () => {
  it('replicates to both with server ids from serverIdBase, and destroy() stops all and deletes the run directory', async () => {
    const cluster = await startMariaDb({ replicas: 2 });
    const { primary, replicas, dir } = cluster;
    try {
      expect([primary, ...replicas].map((s) => s.serverId)).toEqual([1, 2, 3]);
      await query(primary, 'CREATE DATABASE app');
      await query(primary, 'CREATE TABLE app.probe (id INT PRIMARY KEY)');
      await query(primary, 'INSERT INTO app.probe VALUES (7)');
      await cluster.waitForReplicaCatchUp();
      for (const replica of replicas) expect(await query(replica, 'SELECT id FROM app.probe')).toEqual([{ id: 7 }]);
    } finally {
      await cluster.destroy();
    }
    expect(existsSync(dir)).toBe(false);
    await expect(query(primary, 'SELECT 1')).rejects.toThrow();
  });

  it('rejects a server id base below 1', async () => {
    await expect(startMariaDb({ serverIdBase: 0 })).rejects.toMatchObject({ code: 'DBP_ERR_TESTING_INVALID_OPTION' });
  });
});
