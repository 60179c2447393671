// startRedisCluster: a real Redis Cluster serving all 16384 slots, with failover when replicas are asked for.
import { existsSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import { CLUSTER_SLOTS, startRedisCluster, type RedisCluster, type RedisServer } from '../src';

jest.setTimeout(120_000);

async function command(server: Pick<RedisServer, 'host' | 'port' | 'password'>, ...args: string[]): Promise<unknown> {
  const { host, port, password } = server;
  const client = new Redis({ host, port, password, lazyConnect: true, enableReadyCheck: false, disconnectTimeout: 100 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(args[0], ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

/** CLUSTER SHARDS as [{ slots: number[], nodes: [{ id, role, port, health }] }]. */
async function shards(server: RedisServer): Promise<{ slots: number[]; nodes: Record<string, unknown>[] }[]> {
  const pairs = (list: unknown[]): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < list.length; i += 2) out[String(list[i])] = list[i + 1];
    return out;
  };
  const raw = (await command(server, 'CLUSTER', 'SHARDS')) as unknown[][];
  return raw.map((shard) => {
    const fields = pairs(shard);
    return { slots: (fields.slots as unknown[]).map(Number), nodes: (fields.nodes as unknown[][]).map(pairs) };
  });
}

function servedSlots(all: { slots: number[] }[]): number {
  return all.reduce((sum, s) => sum + s.slots.reduce((n, v, i) => (i % 2 === 0 ? n + (s.slots[i + 1] - v + 1) : n), 0), 0);
}

describe('startRedisCluster (3 masters)', () => {
  let cluster: RedisCluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('serves all 16384 slots on every node and CLUSTER SHARDS lists 3 masters', async () => {
    expect(cluster.masters).toHaveLength(3);
    expect(cluster.replicas).toHaveLength(0);
    for (const node of cluster.nodes) {
      expect(String(await command(node, 'CLUSTER', 'INFO'))).toMatch(/cluster_state:ok[\s\S]*cluster_slots_ok:16384/);
      const view = await shards(node);
      expect(view.filter((s) => s.nodes.some((n) => n.role === 'master'))).toHaveLength(3);
      expect(servedSlots(view)).toBe(CLUSTER_SLOTS);
    }
    expect(cluster.masters.map((m) => m.slots)).toEqual([
      [0, 5460],
      [5461, 10921],
      [10922, 16383],
    ]);
  });

  it('routes keys to their slot owners for a cluster client', async () => {
    const seed = { host: cluster.nodes[0].host, port: cluster.nodes[0].port };
    const client = new Cluster([seed], { redisOptions: { disconnectTimeout: 100 } });
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `key:${i}`);
      await Promise.all(keys.map((k) => client.set(k, k.toUpperCase())));
      expect(await Promise.all(keys.map((k) => client.get(k)))).toEqual(keys.map((k) => k.toUpperCase()));
      const perMaster = await Promise.all(cluster.masters.map((m) => command(m, 'DBSIZE')));
      expect(perMaster.every((n) => Number(n) > 0)).toBe(true);
      expect(perMaster.reduce((a: number, n) => a + Number(n), 0)).toBe(30);
    } finally {
      client.disconnect();
    }
  });

  it('keeps slots and keys when a master is stopped and started on the same port', async () => {
    const slot = 15495; // CLUSTER KEYSLOT {a}x
    expect(await command(cluster.nodes[0], 'CLUSTER', 'KEYSLOT', '{a}x')).toBe(slot);
    const owner = cluster.masters.find((m) => m.slots && m.slots[0] <= slot && slot <= m.slots[1]);
    if (!owner) throw new Error('no master owns slot 15495');
    await command(owner, 'SET', '{a}x', '1');
    const port = owner.port;
    await owner.stop();
    await owner.start();
    await cluster.waitForClusterOk();
    expect(owner.port).toBe(port);
    expect(await command(owner, 'GET', '{a}x')).toBe('1');
    expect(await command(owner, 'CLUSTER', 'MYID')).toBe(owner.nodeId);
  });
});

describe('startRedisCluster with replicas', () => {
  it('puts one replica under each master, requires its password, and fails over when a master is killed', async () => {
    const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 1_000, password: 'pw' });
    try {
      expect(cluster.nodes).toHaveLength(6);
      await expect(command({ ...cluster.nodes[0], password: undefined }, 'PING')).rejects.toThrow(/NOAUTH/);
      cluster.replicas.forEach((r, i) => expect(r.replicaOf).toBe(cluster.masters[i].nodeId));
      const victim = cluster.masters[0];
      const heir = cluster.replicas[0];
      expect(await command(victim, 'CLUSTER', 'KEYSLOT', '{b}k')).toBe(3300); // in the first master's range
      await command(victim, 'SET', '{b}k', 'v');
      await command(victim, 'WAIT', '1', '5000');
      await victim.kill();
      await cluster.waitForClusterOk({ timeoutMs: 30_000 });
      expect(String(await command(heir, 'ROLE'))).toMatch(/^master/);
      expect(await command(heir, 'GET', '{b}k')).toBe('v');
    } finally {
      await cluster.destroy();
    }
    expect(existsSync(cluster.dir)).toBe(false);
  });

  it('rejects a negative replica count', async () => {
    await expect(startRedisCluster({ replicasPerMaster: -1 })).rejects.toMatchObject({ code: 'DBP_ERR_TESTING_INVALID_OPTION' });
  });
});
