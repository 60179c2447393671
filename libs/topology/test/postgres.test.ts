// topology on a real PostgreSQL primary + streaming replica, service and edge-side client in
// separate processes on a real nats-server: down/up, lag from paused WAL replay, readiness.
import { Client } from 'pg';
import { startNats, startPostgres, tmpDir, waitFor, type NatsServer, type PostgresServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import { baseToml, freePort, INTERVAL_SECONDS, startEdgeProbe, startTopology, waitForBackend, writeConfig, type EdgeProbe, type TopologyProcess } from './support';

jest.setTimeout(120_000);

/** `X/Y` as a number (-1 when absent). */
const lsnValue = (lsn: string | null | undefined): bigint => {
  const [hi, lo] = (lsn ?? '').split('/');
  return hi && lo ? (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`) : -1n;
};

describe('topology with PostgreSQL', () => {
  let pg: ReplicatedServers<PostgresServer>;
  let nats: NatsServer;
  let dir: TempDir;
  let topology: TopologyProcess;
  let edge: EdgeProbe;

  async function sql(server: PostgresServer, text: string): Promise<Record<string, unknown>[]> {
    const client = new Client({ host: server.host, port: server.port, user: server.user, database: server.database });
    await client.connect();
    try {
      return (await client.query(text)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    [pg, nats, dir] = await Promise.all([startPostgres({ replicas: 1 }), startNats(), tmpDir('topology-pg')]);
    const adminPort = await freePort();
    const path = writeConfig(
      dir.path,
      'dbproxy.toml',
      `${baseToml(nats.url, adminPort)}
[postgres]
max_replica_lag_seconds = 2
[[postgres_backends]]
name = "pg-primary"
address = "127.0.0.1:${pg.primary.port}"
role = "primary"
[[postgres_backends]]
name = "pg-replica"
address = "127.0.0.1:${pg.replicas[0]?.port}"
role = "replica"
`,
    );
    topology = await startTopology(path, adminPort);
    edge = await startEdgeProbe(path, 'postgres');
    await waitFor(() => edge.client.readiness().status === 'ready', { timeoutMs: 20_000, description: 'the edge to be ready' });
  });

  afterAll(async () => {
    await edge?.stop();
    await topology?.proc.stop('SIGKILL');
    await Promise.allSettled([pg?.destroy(), nats?.destroy()]);
    await dir?.remove();
  });

  it('publishes the primary and the streaming replica healthy, with LSN positions', async () => {
    const { client } = edge;
    expect(client.usable('default', 'primary').map((b) => b.name)).toEqual(['pg-primary']);
    expect(client.usable('default', 'replica').map((b) => b.name)).toEqual(['pg-replica']);
    await sql(pg.primary, 'CREATE TABLE IF NOT EXISTS topo (id serial PRIMARY KEY, v int)');
    const [{ lsn }] = (await sql(pg.primary, 'SELECT pg_current_wal_lsn()::text AS lsn')) as [{ lsn: string }];
    await waitFor(() => lsnValue(client.lastHealth('pg-replica')?.position) >= lsnValue(lsn), { timeoutMs: 15_000, description: `replica replay position past ${lsn}` });
    expect(client.lastHealth('pg-primary')).toMatchObject({ up: true, roleObserved: 'primary', lagSeconds: null });
    expect(client.lastHealth('pg-replica')).toMatchObject({ up: true, roleObserved: 'replica' });
    expect(client.lastHealth('pg-replica')?.lagSeconds).toBeLessThan(2);
  });

  it('shows a stopped replica down within three intervals and up again once it restarts', async () => {
    const replica = pg.replicas[0] as PostgresServer;
    await replica.stop();
    const downAfterMs = await waitForBackend(edge.client, 'pg-replica', (b) => !b.healthy);
    expect(downAfterMs).toBeLessThanOrEqual(3 * INTERVAL_SECONDS * 1000);
    expect(edge.client.usable('default', 'replica')).toEqual([]);

    await replica.start();
    await waitForBackend(edge.client, 'pg-replica', (b) => b.healthy && !b.lagging);
  });

  it('marks the replica lagging while WAL replay is paused and the primary takes writes, and clears it on resume', async () => {
    const replica = pg.replicas[0] as PostgresServer;
    await sql(replica, 'SELECT pg_wal_replay_pause()');
    await sql(pg.primary, 'INSERT INTO topo (v) SELECT generate_series(1, 100)');
    await waitForBackend(edge.client, 'pg-replica', (b) => b.lagging && b.healthy);
    expect(edge.client.usable('default', 'replica')).toEqual([]);
    // the lag itself is measured too: the primary's positions move on without the replica
    await waitFor(() => (edge.client.lastHealth('pg-replica')?.lagSeconds ?? 0) > 0.5, { description: 'a measured lag' });

    await sql(replica, 'SELECT pg_wal_replay_resume()');
    await waitForBackend(edge.client, 'pg-replica', (b) => !b.lagging);
    expect(edge.client.usable('default', 'replica').map((b) => b.name)).toEqual(['pg-replica']);
  });

  it('makes the edge unready (503) with the reason while the primary is down, and ready once it is back', async () => {
    await pg.primary.stop();
    const { body } = await waitFor(async () => {
      const r = await edge.readyz();
      return r.status === 503 ? r : false;
    }, { timeoutMs: 15_000, description: '/readyz 503' });
    expect(body.reasons.join('\n')).toMatch(/pg-edge\/topology: unready \(shard default primary pg-primary \(127\.0\.0\.1:\d+\) is down: /);

    await pg.primary.start();
    await waitFor(async () => (await edge.readyz()).status === 200, { timeoutMs: 20_000, description: '/readyz 200 again' });
    await waitForBackend(edge.client, 'pg-replica', (b) => b.healthy && !b.lagging);
  });
});
