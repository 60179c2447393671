// The reply cache over a 3-master Redis Cluster: one tracker per master, fills on each master's
// shared connection, invalidations from every master, and a cross-slot MGET answered from the cache
// once every key hits.
import { Cluster } from 'ioredis';
import { startRedisCluster, waitFor, type RedisCluster } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(180_000);

describe('reply cache over a Redis Cluster', () => {
  let cluster: RedisCluster;
  let edge: EdgeHarness;
  let direct: Cluster;
  const keys = ['{a}cache', '{b}cache', '{c}cache', '{d}cache', '{e}cache', '{f}cache'];

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    await cluster.waitForClusterOk();
    edge = await startEdge({ mode: 'command', clusterSeeds: cluster.masters.map((m) => m.port), topology: 'redis_slot_refresh_seconds = 3600', extra: '[redis.cache]\nenabled = true\n' });
    await waitFor(async () => (await edge.metric('dbproxy_redis_cache_trackers', { state: 'ready' })) === 3, { timeoutMs: 15_000, description: 'a tracker per master' });
    direct = new Cluster(cluster.masters.map((m) => ({ host: '127.0.0.1', port: m.port })));
  });
  afterAll(async () => {
    direct?.disconnect();
    await edge?.stop();
    await cluster?.destroy();
  });

  /** MGET calls all masters have run (INFO commandstats). */
  async function masterCalls(command: string): Promise<number> {
    let total = 0;
    for (const node of direct.nodes('master')) total += Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec((await node.info('commandstats')) as string)?.[1] ?? 0);
    return total;
  }

  it('fills on every master, answers a cross-slot MGET from the cache, and takes invalidations from every master', async () => {
    const client = edge.client();
    for (const [n, key] of keys.entries()) await direct.set(key, `v${n}`);
    for (const key of keys) await client.get(key); // fills
    const gets = await masterCalls('get');
    const mgets = await masterCalls('mget');
    for (const [n, key] of keys.entries()) expect(await client.get(key)).toBe(`v${n}`);
    expect(await client.mget(...keys)).toEqual(keys.map((_, n) => `v${n}`));
    expect(await masterCalls('get')).toBe(gets);
    expect(await masterCalls('mget')).toBe(mgets);
    for (const [n, key] of keys.entries()) await direct.set(key, `w${n}`);
    await waitFor(async () => JSON.stringify(await client.mget(...keys)) === JSON.stringify(keys.map((_, n) => `w${n}`)), { timeoutMs: 5_000, description: 'every master invalidated its key' });
    expect(await edge.metric('dbproxy_redis_cache_invalidations_total')).toBeGreaterThanOrEqual(keys.length);
  });
});
