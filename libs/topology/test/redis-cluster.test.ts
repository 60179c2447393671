// Redis Cluster slot maps: a real 3-master cluster discovered from one seed, and a slot moved with
// CLUSTER SETSLOT that reaches the edge-side client after it asks for a refresh.
import { startNats, startRedisCluster, tmpDir, waitFor, type NatsServer, type RedisCluster, type RedisClusterNode, type TempDir } from '@dbproxy/testing';
import { baseToml, freePort, redisCommand, startEdgeProbe, startTopology, writeConfig, type EdgeProbe, type TopologyProcess } from './support';

jest.setTimeout(120_000);

describe('topology with a Redis Cluster', () => {
  let cluster: RedisCluster;
  let nats: NatsServer;
  let dir: TempDir;
  let topology: TopologyProcess;
  let edge: EdgeProbe;

  beforeAll(async () => {
    [cluster, nats, dir] = await Promise.all([startRedisCluster({ masters: 3 }), startNats(), tmpDir('topology-cluster')]);
    const adminPort = await freePort();
    const seed = cluster.masters[0] as RedisClusterNode;
    // the periodic slot refresh is 30 s (baseToml): within this test only a refresh request finds a moved slot
    const path = writeConfig(
      dir.path,
      'dbproxy.toml',
      `${baseToml(nats.url, adminPort)}
[redis]
mode = "command"
[redis.cluster]
enabled = true
seeds = ["127.0.0.1:${seed.port}"]
`,
    );
    topology = await startTopology(path, adminPort);
    edge = await startEdgeProbe(path, 'redis');
  });

  afterAll(async () => {
    await edge?.stop();
    await topology?.proc.stop('SIGKILL');
    await Promise.allSettled([cluster?.destroy(), nats?.destroy()]);
    await dir?.remove();
  });

  it('discovers the three masters, their slot ranges and their health from one seed', async () => {
    const { client } = edge;
    await waitFor(() => client.readiness().status === 'ready', { timeoutMs: 20_000, description: 'the edge to be ready' });
    const [m0, m1, m2] = cluster.masters as [RedisClusterNode, RedisClusterNode, RedisClusterNode];
    const view = client.current();
    expect(view.shards()).toHaveLength(3);
    expect(view.snapshot?.shards.map((s) => s.slots)).toEqual([[[0, 5460]], [[5461, 10921]], [[10922, 16383]]]);
    for (const [slot, node] of [[0, m0], [5460, m0], [5461, m1], [10921, m1], [10922, m2], [16383, m2]] as const) {
      expect(client.slotOwner(slot)).toMatchObject({ name: node.nodeId, address: `127.0.0.1:${node.port}`, role: 'primary', healthy: true });
    }
    expect(client.usable(m1.nodeId, 'primary').map((b) => b.name)).toEqual([m1.nodeId]);
    await waitFor(() => client.lastHealth(m2.nodeId)?.up === true, { description: 'a health report of a discovered node' });
    expect(client.lastHealth(m2.nodeId)).toMatchObject({ roleObserved: 'primary', lagSeconds: null });
  });

  it('shows a slot moved with CLUSTER SETSLOT after a refresh request', async () => {
    const { client } = edge;
    const [m0, m1, m2] = cluster.masters as [RedisClusterNode, RedisClusterNode, RedisClusterNode];
    const generation = client.generation();
    // an empty slot changes hands: the new owner first, then the old one, then the rest
    for (const node of [m1, m0, m2]) await redisCommand(node, 'CLUSTER', 'SETSLOT', '100', 'NODE', m1.nodeId);
    expect(client.slotOwner(100)?.name).toBe(m0.nodeId);

    await waitFor(async () => (await client.requestRefresh('moved', { slot: 100, address: `127.0.0.1:${m1.port}` })) && client.slotOwner(100)?.name === m1.nodeId, {
      timeoutMs: 15_000,
      description: 'slot 100 owned by the second master',
    });
    expect(client.generation()).toBeGreaterThan(generation);
    expect(client.slotOwner(99)?.name).toBe(m0.nodeId);
    expect(client.slotOwner(101)?.name).toBe(m0.nodeId);
    const shards = client.current().snapshot?.shards ?? [];
    expect(shards.find((s) => s.shard === m0.nodeId)?.slots).toEqual([
      [0, 99],
      [101, 5460],
    ]);
    expect(shards.find((s) => s.shard === m1.nodeId)?.slots).toEqual([
      [100, 100],
      [5461, 10921],
    ]);
  });
});
