// topology on a real Redis primary + replica, service and edge-side client in separate processes
// on a real nats-server: down/up, replication offsets, link-down lag, readiness.
import { Redis } from 'ioredis';
import { startNats, startRedis, tmpDir, waitFor, type NatsServer, type RedisServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import { baseToml, freePort, INTERVAL_SECONDS, startEdgeProbe, startTopology, waitForBackend, writeConfig, type EdgeProbe, type TopologyProcess } from './support';

jest.setTimeout(120_000);

describe('topology with Redis', () => {
  let redis: ReplicatedServers<RedisServer>;
  let nats: NatsServer;
  let dir: TempDir;
  let topology: TopologyProcess;
  let edge: EdgeProbe;

  async function command(server: RedisServer, ...args: string[]): Promise<unknown> {
    const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    await client.connect();
    try {
      return await client.call(args[0] as string, ...args.slice(1));
    } finally {
      client.disconnect();
    }
  }

  beforeAll(async () => {
    [redis, nats, dir] = await Promise.all([startRedis({ replicas: 1 }), startNats(), tmpDir('topology-redis')]);
    const adminPort = await freePort();
    const path = writeConfig(
      dir.path,
      'dbproxy.toml',
      `${baseToml(nats.url, adminPort)}
[[redis_backends]]
name = "r-primary"
address = "127.0.0.1:${redis.primary.port}"
role = "primary"
[[redis_backends]]
name = "r-replica"
address = "127.0.0.1:${redis.replicas[0]?.port}"
role = "replica"
max_replica_lag_seconds = 2
`,
    );
    topology = await startTopology(path, adminPort);
    edge = await startEdgeProbe(path, 'redis');
    await waitFor(() => edge.client.readiness().status === 'ready', { timeoutMs: 20_000, description: 'the edge to be ready' });
  });

  afterAll(async () => {
    await edge?.stop();
    await topology?.proc.stop('SIGKILL');
    await Promise.allSettled([redis?.destroy(), nats?.destroy()]);
    await dir?.remove();
  });

  it('publishes the primary and the replica healthy, with replication offsets', async () => {
    const { client } = edge;
    expect(client.usable('default', 'primary').map((b) => b.name)).toEqual(['r-primary']);
    expect(client.usable('default', 'replica').map((b) => b.name)).toEqual(['r-replica']);
    await command(redis.primary, 'SET', 'topology-key', 'x'.repeat(1000));
    const offset = (await command(redis.primary, 'ROLE')) as [string, number];
    await waitFor(() => Number(client.lastHealth('r-replica')?.position ?? -1) >= offset[1], { timeoutMs: 15_000, description: `replica offset ${offset[1]}` });
    expect(client.lastHealth('r-primary')).toMatchObject({ up: true, roleObserved: 'primary', lagSeconds: null });
    expect(client.lastHealth('r-replica')).toMatchObject({ up: true, roleObserved: 'replica' });
    expect(client.lastHealth('r-replica')?.lagSeconds).toBeLessThan(2);
  });

  it('shows a stopped replica down within three intervals and up again once it restarts', async () => {
    const replica = redis.replicas[0] as RedisServer;
    await replica.stop();
    const downAfterMs = await waitForBackend(edge.client, 'r-replica', (b) => !b.healthy);
    expect(downAfterMs).toBeLessThanOrEqual(3 * INTERVAL_SECONDS * 1000);
    expect(edge.client.usable('default', 'replica')).toEqual([]);

    await replica.start();
    await waitForBackend(edge.client, 'r-replica', (b) => b.healthy && !b.lagging);
  });

  it('marks a hung replica (SIGSTOP) down through check timeouts, and up again after SIGCONT', async () => {
    const replica = redis.replicas[0] as RedisServer;
    process.kill(replica.pid as number, 'SIGSTOP');
    try {
      await waitForBackend(edge.client, 'r-replica', (b) => !b.healthy);
      expect(edge.client.lastHealth('r-replica')?.error).toMatch(/timed out after 800 ms/);
    } finally {
      process.kill(replica.pid as number, 'SIGCONT');
    }
    await waitForBackend(edge.client, 'r-replica', (b) => b.healthy && !b.lagging);
  });

  it('marks a replica that stopped replicating (REPLICAOF NO ONE) lagging, and clears it when it replicates again', async () => {
    const replica = redis.replicas[0] as RedisServer;
    await command(replica, 'REPLICAOF', 'NO', 'ONE');
    await waitForBackend(edge.client, 'r-replica', (b) => b.lagging && b.healthy);
    expect(edge.client.lastHealth('r-replica')?.roleObserved).toBe('primary');
    expect(edge.client.usable('default', 'replica')).toEqual([]);

    await command(replica, 'REPLICAOF', redis.primary.host, String(redis.primary.port));
    await waitForBackend(edge.client, 'r-replica', (b) => !b.lagging, 30_000);
  });

  it('makes the edge unready (503) with the reason while the primary is down, and ready once it is back', async () => {
    await redis.primary.stop();
    const { body } = await waitFor(async () => {
      const r = await edge.readyz();
      return r.status === 503 ? r : false;
    }, { timeoutMs: 15_000, description: '/readyz 503' });
    expect(body.reasons.join('\n')).toMatch(/redis-edge\/topology: unready \(shard default primary r-primary \(127\.0\.0\.1:\d+\) is down: .+\)/);

    await redis.primary.start();
    await waitFor(async () => (await edge.readyz()).status === 200, { timeoutMs: 20_000, description: '/readyz 200 again' });
  });
});
