// Command mode over a real 3-master Redis Cluster: slots read from the seeds by the real topology
// service, replies equal a direct connection's, a live slot migration under load stays invisible to
// single-key commands (MOVED/ASK followed, topology asked to refresh), cross-slot commands split and
// merge, cluster-wide commands, sharded pub/sub.
import { Redis } from 'ioredis';
import { redisSlot } from '@dbproxy/routing';
import { startRedis, startRedisCluster, waitFor, type RedisCluster, type RedisClusterNode, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';
import { redisCli } from './processes';
import { RawClient } from './raw-client';
import { mixedCommands, runPipeline } from './workload';

jest.setTimeout(180_000);

/** A hash tag whose keys live in `slot`. */
function tagForSlot(slot: number): string {
  for (let i = 0; ; i++) if (redisSlot(`{m${i}}`) === slot) return `{m${i}}`;
}

describe('command mode over a 3-master Redis Cluster', () => {
  let cluster: RedisCluster;
  let direct: ReplicatedServers<RedisServer>;
  let edge: EdgeHarness;
  const node = (n: RedisServer) => new Redis({ host: '127.0.0.1', port: n.port, maxRetriesPerRequest: 0 });

  beforeAll(async () => {
    [cluster, direct] = await Promise.all([startRedisCluster({ masters: 3 }), startRedis({ replicas: 0 })]);
    await cluster.waitForClusterOk();
    // topology re-reads the slot map on its own only hourly: within a test, a moved slot reaches it through the edge's refresh request
    edge = await startEdge({ mode: 'command', redis: 'cross_shard_writes = true', clusterSeeds: cluster.masters.map((m) => m.port), topology: 'redis_slot_refresh_seconds = 3600' });
  });
  afterAll(async () => {
    await edge?.stop();
    await Promise.all([cluster?.destroy(), direct?.destroy()]);
  });

  /** The shard (named by its primary's node id) owning `slot` in the topology service's last snapshot. */
  const publishedOwner = async (slot: number): Promise<string | undefined> =>
    (await edge.topology()).snapshot?.shards.find((s) => (s.slots ?? []).some(([from, to]) => slot >= from && slot <= to))?.shard;

  it('routes by the slot map the topology service read from the seeds: one shard per master, named by node id', async () => {
    const snapshot = (await edge.topology()).snapshot;
    expect(snapshot?.shards.map((s) => s.shard).sort()).toEqual(cluster.masters.map((m) => m.nodeId).sort());
    for (const shard of snapshot?.shards ?? []) {
      const master = cluster.masters.find((m) => m.nodeId === shard.shard);
      expect(shard.backends).toEqual([expect.objectContaining({ name: master?.nodeId, address: `127.0.0.1:${master?.port}`, role: 'primary', healthy: true })]);
    }
    expect((snapshot?.shards ?? []).flatMap((s) => s.slots ?? []).reduce((n, [from, to]) => n + to - from + 1, 0)).toBe(16384);
    const view = (await (await fetch(`${edge.admin}/redis/edge`)).json()) as { cluster: boolean; shards: { primary: string | null }[] };
    expect(view.cluster).toBe(true);
    expect(view.shards.map((s) => s.primary).sort()).toEqual(cluster.masters.map((m) => `127.0.0.1:${m.port}`).sort());
  });

  it('gives 10,000 mixed pipelined commands the same replies as a direct connection', async () => {
    const commands = mixedCommands(10_000, 7, 'cmix', { multiKey: true });
    const plain = node(direct.primary);
    const [through, reference] = [await runPipeline(edge.client(), commands), await runPipeline(plain, commands)];
    plain.disconnect();
    const mismatches = through.flatMap((r, i) => (JSON.stringify(r) === JSON.stringify(reference[i]) ? [] : [{ i, command: commands[i], through: r, direct: reference[i] }]));
    expect(mismatches.slice(0, 5)).toEqual([]);
    const sizes = await Promise.all(cluster.masters.map(async (m) => {
      const c = node(m);
      const n = await c.dbsize();
      c.disconnect();
      return n;
    }));
    expect(sizes.every((n) => n > 0)).toBe(true);
  });

  it('splits cross-slot commands per slot, sums DBSIZE and scans every node', async () => {
    const c = edge.client();
    const keys = Array.from({ length: 30 }, (_, i) => `cs:${i}`);
    expect(await c.mset(...keys.flatMap((k, i) => [k, `${i}`]))).toBe('OK');
    expect(await c.mget(...keys)).toEqual(keys.map((_, i) => `${i}`));
    expect(await c.exists(...keys)).toBe(30);
    const total = (await Promise.all(cluster.masters.map(async (m) => {
      const n = node(m);
      const size = await n.dbsize();
      n.disconnect();
      return size;
    }))).reduce((x, y) => x + y, 0);
    expect(await c.dbsize()).toBe(total);
    const seen = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await c.scan(cursor, 'MATCH', 'cs:*', 'COUNT', 20);
      batch.forEach((k) => seen.add(k));
      cursor = next;
    } while (cursor !== '0');
    expect([...seen].sort()).toEqual([...keys].sort());
    expect(await c.del(...keys)).toBe(30);
    await c.set('cs:2', 'two');
    const cli = await redisCli(edge.rwPort, ['--no-raw', 'MGET', 'cs:1', 'cs:2', 'cs:3']);
    expect(cli.stdout.trim().split('\n')).toEqual(['1) (nil)', '2) "two"', '3) (nil)']);
  });

  it('keeps single-key commands free of client-visible errors through a live slot migration', async () => {
    const slot = 7000;
    const tag = tagForSlot(slot);
    const layout = async () => {
      const n = node(cluster.masters[0]);
      const slots = (await n.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string]][];
      n.disconnect();
      return slots;
    };
    const ownerOf = async (s: number): Promise<RedisClusterNode> => {
      const range = (await layout()).find(([from, to]) => s >= from && s <= to);
      return cluster.masters.find((m) => m.nodeId === range?.[2][2]) as RedisClusterNode;
    };
    const source = await ownerOf(slot);
    const target = cluster.masters.find((m) => m !== source) as RedisClusterNode;
    expect(await publishedOwner(slot)).toBe(source.nodeId);
    const refreshesBefore = await edge.metric('dbproxy_topology_refresh_requests_total', { protocol: 'redis', reason: 'moved' });
    const keys = Array.from({ length: 300 }, (_, i) => `${tag}:k${i}`);
    const seed = edge.client();
    await seed.mset(...keys.flatMap((k) => [k, '0']));

    let running = true;
    const errors: string[] = [];
    const increments = new Map<string, number>();
    const worker = async (id: number) => {
      const c = edge.client();
      let i = id;
      while (running) {
        const key = keys[i++ % keys.length];
        try {
          await c.incr(key);
          increments.set(key, (increments.get(key) ?? 0) + 1);
          const value = await c.get(key);
          if (value === null) errors.push(`GET ${key} returned null`);
        } catch (err) {
          errors.push(String(err));
        }
      }
    };
    const workers = [0, 1, 2, 3].map((id) => worker(id * 75));
    await new Promise((r) => setTimeout(r, 200));

    const [src, dst] = [node(source), node(target)];
    await dst.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.nodeId);
    await src.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.nodeId);
    for (;;) {
      const batch = (await src.call('CLUSTER', 'GETKEYSINSLOT', slot, 20)) as string[];
      if (batch.length === 0) break;
      await src.call('MIGRATE', '127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...batch);
      await new Promise((r) => setTimeout(r, 30));
    }
    for (const m of cluster.masters) {
      const n = node(m);
      await n.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.nodeId);
      n.disconnect();
    }
    await new Promise((r) => setTimeout(r, 500));
    running = false;
    await Promise.all(workers);
    src.disconnect();

    expect(errors.slice(0, 5)).toEqual([]);
    expect(await dst.call('CLUSTER', 'COUNTKEYSINSLOT', slot)).toBe(keys.length);
    for (const key of keys.slice(0, 50)) expect(Number(await dst.get(key))).toBe(increments.get(key) ?? 0);
    dst.disconnect();
    expect(await edge.metric('dbproxy_redis_redirects_total', { kind: 'ask' })).toBeGreaterThan(0);
    expect(await edge.metric('dbproxy_redis_redirects_total', { kind: 'moved' })).toBeGreaterThan(0);
    // the MOVED made the edge ask topology, which re-read the slot map and published the move
    expect(await edge.metric('dbproxy_topology_refresh_requests_total', { protocol: 'redis', reason: 'moved' })).toBeGreaterThan(refreshesBefore);
    await waitFor(async () => (await publishedOwner(slot)) === target.nodeId, { timeoutMs: 5_000, description: 'topology to publish the moved slot' });
    expect(await ownerOf(slot)).toBe(target);
  });

  it('retries a TRYAGAIN only while nothing was dispatched after it; behind later commands the client gets TRYAGAIN', async () => {
    const slot = 9000;
    const tag = tagForSlot(slot);
    const slots = async () => {
      const n = node(cluster.masters[0]);
      const layout = (await n.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string]][];
      n.disconnect();
      return layout;
    };
    const range = (await slots()).find(([from, to]) => slot >= from && slot <= to);
    const source = cluster.masters.find((m) => m.nodeId === range?.[2][2]) as RedisClusterNode;
    const target = cluster.masters.find((m) => m !== source) as RedisClusterNode;
    const [src, dst] = [node(source), node(target)];
    const [a, b] = [`${tag}:a`, `${tag}:b`];
    await src.mset(a, 'A', b, 'B');
    await dst.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.nodeId);
    await src.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.nodeId);
    await src.call('MIGRATE', '127.0.0.1', target.port, '', 0, 5000, 'KEYS', a);
    try {
      // Pipelined: MGET (TRYAGAIN: a moved, b not) then SET b; a retry would run after the SET.
      const returnedBefore = (await edge.metric('dbproxy_redis_retries_total', { reason: 'tryagain_returned' })) ?? 0;
      const raw = await RawClient.open(edge.rwPort);
      raw.send(['MGET', a, b], ['SET', b, 'B2']);
      const [mget, set] = await raw.texts(2);
      raw.close();
      expect(String(mget)).toMatch(/^-TRYAGAIN/);
      expect(set).toBe('OK');
      expect(await src.get(b)).toBe('B2');
      expect(await edge.metric('dbproxy_redis_retries_total', { reason: 'tryagain_returned' })).toBe(returnedBefore + 1);

      // Alone: retried whole (2 ms doubling), then key by key, each key following its ASK.
      const splitsBefore = (await edge.metric('dbproxy_redis_retries_total', { reason: 'key_by_key' })) ?? 0;
      expect(await edge.client().mget(a, b)).toEqual(['A', 'B2']);
      expect(await edge.metric('dbproxy_redis_retries_total', { reason: 'key_by_key' })).toBe(splitsBefore + 1);

      // A cross-slot MGET whose migrating part retries gates that slot: the SET sent after it waits for it.
      const other = `${tagForSlot(100)}:o`;
      await edge.client().set(other, 'O');
      const gated = await RawClient.open(edge.rwPort);
      gated.send(['MGET', other, a, b], ['SET', b, 'B3'], ['GET', b]);
      const [mget2, set2, get2] = await gated.texts(3);
      gated.close();
      expect(mget2).toEqual(['O', 'A', 'B2']);
      expect(set2).toBe('OK');
      expect(get2).toBe('B3');
      await edge.client().del(other);
    } finally {
      for (const key of [b]) await src.call('MIGRATE', '127.0.0.1', target.port, '', 0, 5000, 'KEYS', key).catch(() => undefined);
      for (const m of cluster.masters) {
        const n = node(m);
        await n.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.nodeId);
        n.disconnect();
      }
      src.disconnect();
      dst.disconnect();
    }
  });

  it('subscribes to channels and shard channels and delivers messages in publish order', async () => {
    const sub = await RawClient.open(edge.rwPort);
    sub.send(['SUBSCRIBE', 'cluster-news'], ['SSUBSCRIBE', '{s}orders']);
    expect(await sub.texts(2)).toEqual([['subscribe', 'cluster-news', 1], ['ssubscribe', '{s}orders', 1]]);
    const pub = edge.client();
    for (let i = 0; i < 200; i++) {
      void pub.publish('cluster-news', `n${i}`);
      void pub.call('SPUBLISH', '{s}orders', `o${i}`);
    }
    const messages = (await sub.texts(400)) as string[][];
    expect(messages.filter((m) => m[0] === 'message').map((m) => m[2])).toEqual(Array.from({ length: 200 }, (_, i) => `n${i}`));
    expect(messages.filter((m) => m[0] === 'smessage').map((m) => m[2])).toEqual(Array.from({ length: 200 }, (_, i) => `o${i}`));
    sub.close();
  });

  it('runs BLPOP on a lease, refuses SET on the read-only listener and answers cluster commands as a plain server', async () => {
    const c = edge.client();
    const waiting = c.blpop('{q}jobs', 5);
    await new Promise((r) => setTimeout(r, 100));
    await edge.client().rpush('{q}jobs', 'j1');
    expect(await waiting).toEqual(['{q}jobs', 'j1']);
    const ro = await redisCli(edge.roPort, ['SET', 'x', '1']);
    expect(ro.stdout.trim()).toBe("ERR 'SET' writes: it is refused on the read-only listener");
    expect(await edge.client({ readOnly: true }).get('{q}missing')).toBeNull();
    await expect(c.call('CLUSTER', 'SLOTS')).rejects.toThrow('This instance has cluster support disabled');
    await expect(c.call('SELECT', '1')).rejects.toThrow('SELECT is not allowed in cluster mode');
  });
});
