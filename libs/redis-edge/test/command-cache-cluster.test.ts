// The reply cache over a 3-master Redis Cluster: one tracker per master, fills on each master's
// fill connection, invalidations from every master, and a cross-slot MGET answered from the cache
// once every key hits, or in part: only the slot parts with missing keys are fetched, and filled.
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

  /** Keys all masters have read (INFO stats keyspace_hits + keyspace_misses). */
  async function keysRead(): Promise<number> {
    let total = 0;
    for (const node of direct.nodes('master')) {
      const stats = (await node.info('stats')) as string;
      total += Number(/keyspace_hits:(\d+)/.exec(stats)?.[1]) + Number(/keyspace_misses:(\d+)/.exec(stats)?.[1]);
    }
    return total;
  }

  it('serves the cached part of a cross-slot MGET, fetches only the missing slot parts in key order, and fills them', async () => {
    const client = edge.client();
    const part = ['{a}part', '{b}part', '{c}part', '{d}part', '{e}part', '{f}part', '{g}part-missing'];
    for (const [n, key] of part.slice(0, 6).entries()) await direct.set(key, `p${n}`);
    for (const key of [part[0], part[2], part[4]]) expect(await client.get(key)).toBe(`p${[0, 2, 4][[part[0], part[2], part[4]].indexOf(key)]}`); // fills 3 of 7
    const expected = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', null];
    const [mgets, read] = [await masterCalls('mget'), await keysRead()];
    expect(await client.mget(...part)).toEqual(expected);
    // Only {b}, {d}, {f} and {g} were asked for, one MGET per slot; the cached three were not read.
    expect(await masterCalls('mget')).toBe(mgets + 4);
    expect(await keysRead()).toBe(read + 4);
    // The fetched parts filled: the same MGET now reaches no master.
    expect(await client.mget(...part)).toEqual(expected);
    expect(await masterCalls('mget')).toBe(mgets + 4);
    expect(await keysRead()).toBe(read + 4);
    // A direct write invalidates one key: only its slot is fetched again.
    await direct.set(part[3], 'changed');
    await waitFor(async () => JSON.stringify(await client.mget(...part)) === JSON.stringify(['p0', 'p1', 'p2', 'changed', 'p4', 'p5', null]), { timeoutMs: 5_000, description: 'the invalidated key read again' });
    expect(await client.mget(...part)).toEqual(['p0', 'p1', 'p2', 'changed', 'p4', 'p5', null]);
    expect(await keysRead()).toBe(read + 5);
    // A pipelined GET behind a partial MGET keeps its order.
    await direct.set(part[1], 'again');
    await waitFor(async () => (await client.mget(part[1], part[0])).join() === 'again,p0', { timeoutMs: 5_000, description: 'invalidation of {b}part' });
    const replies = await client.pipeline().mget(part[5], part[1], part[0]).get(part[1]).set(part[0], 'last').mget(part[0], part[2]).exec();
    expect(replies?.map(([err, v]) => err ?? v)).toEqual([['p5', 'again', 'p0'], 'again', 'OK', ['last', 'p2']]);
  });

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
