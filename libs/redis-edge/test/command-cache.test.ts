// The command-mode reply cache ([redis.cache]) on a real Redis through ioredis: a hit after a fill
// (the server sees no GET), writes through the proxy invalidating at dispatch (plain, MULTI, scripts),
// writes made directly on the server invalidating through the tracking connection's pushes, a
// killed tracker flushing the cache and pausing fills until it is back, and two edge processes
// sharing the server staying coherent within the tracking latency.
import { Redis } from 'ioredis';
import { startRedis, waitFor, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { servedFromCache } from './cache-reads';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

const CACHE = '[redis.cache]\nenabled = true\nmax_bytes = 1048576\nmax_age_seconds = 300\n';

let servers: ReplicatedServers<RedisServer>;
let a: EdgeHarness;
let b: EdgeHarness;
let direct: Redis;
let viaA: Redis;
let viaB: Redis;
const prefix = `cache:${process.pid}:`;

async function startCachingEdge(): Promise<EdgeHarness> {
  const edge = await startEdge({ mode: 'command', backends: [{ name: 'r1', port: servers.primary.port, role: 'primary' }], extra: CACHE });
  await waitFor(async () => (await edge.metric('dbproxy_redis_cache_trackers', { state: 'ready' })) === 1, { timeoutMs: 10_000, description: 'the tracker is ready' });
  return edge;
}

/** Calls of `command` the server has run so far (INFO commandstats). */
async function serverCalls(command: string): Promise<number> {
  const info = (await direct.info('commandstats')) as string;
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}
const serverGets = (): Promise<number> => serverCalls('get');

/** Reads `key` through `client` until it gives `value` (the tracking latency), returning how long that took. */
async function readUntil(client: Redis, key: string, value: string, timeoutMs = 3_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((await client.get(key)) === value) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`${key} never read as ${value}: last ${await client.get(key)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

beforeAll(async () => {
  servers = await startRedis({ replicas: 0 });
  direct = new Redis({ host: '127.0.0.1', port: servers.primary.port, maxRetriesPerRequest: 0 });
  [a, b] = await Promise.all([startCachingEdge(), startCachingEdge()]);
  viaA = a.client();
  viaB = b.client();
});

afterAll(async () => {
  direct?.disconnect();
  await a?.stop();
  await b?.stop();
  await servers?.destroy();
});

describe('command-mode reply cache', () => {
  it('serves a GET from the cache after a fill: the server runs no GET for the hit', async () => {
    const key = `${prefix}hit`;
    await direct.set(key, 'v1');
    expect(await viaA.get(key)).toBe('v1');
    const gets = await serverGets();
    const hits = await a.metric('dbproxy_redis_cache_hits_total');
    for (let n = 0; n < 20; n++) expect(await viaA.get(key)).toBe('v1');
    expect(await serverGets()).toBe(gets); // no GET reached the server
    expect(await a.metric('dbproxy_redis_cache_hits_total')).toBeGreaterThanOrEqual(hits + 20);
    expect(await a.metric('dbproxy_redis_cache_fills_total')).toBeGreaterThan(0);
    // Strict hits wait for a PING on the tracker, one per turn for all hits read in it: a pipeline
    // of 50 hits costs about one (the topology service's health checks PING the server too).
    let pings = await serverCalls('ping');
    const replies = await viaA.pipeline(Array.from({ length: 50 }, () => ['get', key])).exec();
    expect(replies?.map(([, v]) => v)).toEqual(Array.from({ length: 50 }, () => 'v1'));
    expect(await serverCalls('ping')).toBeLessThanOrEqual(pings + 5);
    // One at a time, each hit is a turn of its own: a PING each.
    pings = await serverCalls('ping');
    for (let n = 0; n < 30; n++) expect(await viaA.get(key)).toBe('v1');
    expect(await serverCalls('ping')).toBeGreaterThanOrEqual(pings + 30);
    expect(await serverGets()).toBe(gets);
  });

  it('serves MGET from the cache only when every key hits, and never lets an MGET nil answer a GET of another type', async () => {
    const [k1, k2, list] = [`${prefix}m1`, `${prefix}m2`, `${prefix}list`];
    await direct.mset(k1, 'a', k2, 'b');
    await direct.rpush(list, 'x');
    expect(await viaA.mget(k1, k2, list)).toEqual(['a', 'b', null]);
    const gets = await serverGets();
    expect(await viaA.mget(k1, k2, list)).toEqual(['a', 'b', null]);
    expect(await viaA.get(k1)).toBe('a');
    await expect(viaA.get(list)).rejects.toThrow(/WRONGTYPE/);
    expect(await serverGets()).toBe(gets + 1); // only the GET of the list reached the server
  });

  it('a write through the proxy invalidates at dispatch: the next command of the pipeline reads it', async () => {
    const key = `${prefix}own`;
    await direct.set(key, 'old');
    await servedFromCache(a, viaA, key);
    const replies = await viaA.pipeline().set(key, 'new').get(key).exec();
    expect(replies?.map(([, v]) => v)).toEqual(['OK', 'new']);
    await servedFromCache(a, viaA, key);
    const tx = await viaA.pipeline().call('MULTI').call('SET', key, 'in-multi').call('EXEC').get(key).exec();
    expect(tx?.map(([, v]) => v)).toEqual(['OK', 'QUEUED', ['OK'], 'in-multi']);
    await servedFromCache(a, viaA, key);
    const script = await viaA.pipeline().eval("return redis.call('SET', KEYS[1], ARGV[1])", 1, key, 'by-script').get(key).exec();
    expect(script?.map(([, v]) => v)).toEqual(['OK', 'by-script']);
    await servedFromCache(a, viaA, key);
    expect((await viaA.pipeline().append(key, '+').get(key).exec())?.map(([, v]) => v)).toEqual([10, 'by-script+']);
  });

  it('a hit waiting for its barrier is not overtaken by the same pipeline\'s write of its key', async () => {
    const key = `${prefix}behind`;
    for (let round = 0; round < 5; round++) {
      await direct.set(key, `old${round}`);
      await servedFromCache(a, viaA, key);
      // The write waits until the hit is answered: were it sent at once, it would invalidate the
      // key before the barrier passed and the hit's read would go to the server after it.
      const replies = await viaA.pipeline().get(key).set(key, `new${round}`).get(key).exec();
      expect(replies?.map(([, v]) => v)).toEqual([`old${round}`, 'OK', `new${round}`]);
    }
  });

  it('a write made directly on the server reaches the cache as a tracking invalidation', async () => {
    const key = `${prefix}direct`;
    await direct.set(key, 'before');
    await servedFromCache(a, viaA, key);
    const invalidations = await a.metric('dbproxy_redis_cache_invalidations_total');
    await direct.set(key, 'after');
    const latency = await readUntil(viaA, key, 'after');
    expect(latency).toBeLessThan(3_000);
    expect(await a.metric('dbproxy_redis_cache_invalidations_total')).toBeGreaterThan(invalidations);
    // FLUSHDB on the server: a null invalidation flushes everything.
    await servedFromCache(a, viaA, key);
    const flushes = await a.metric('dbproxy_redis_cache_flushes_total', { reason: 'server_flush' });
    await direct.flushdb();
    await waitFor(async () => (await viaA.get(key)) === null, { timeoutMs: 3_000, description: 'the flushed key reads as nil' });
    expect(await a.metric('dbproxy_redis_cache_flushes_total', { reason: 'server_flush' })).toBeGreaterThan(flushes);
  });

  it('a killed tracker flushes the cache, pauses fills, and the cache recovers once it is back', async () => {
    const key = `${prefix}killed`;
    await direct.set(key, 'one');
    await servedFromCache(a, viaA, key);
    await servedFromCache(b, viaB, key);
    const flushes = await a.metric('dbproxy_redis_cache_flushes_total', { reason: 'tracker_lost' });
    const clients = ((await direct.call('CLIENT', 'LIST')) as string).split('\n').filter((l) => / resp=3 /.test(` ${l} `));
    expect(clients.length).toBe(2); // one tracker per edge
    for (const line of clients) expect(await direct.call('CLIENT', 'KILL', 'ID', /id=(\d+)/.exec(line)?.[1] as string)).toBe(1);
    // Written while no tracker listens: no invalidation can reach either edge, the flush must.
    await direct.set(key, 'two');
    expect(await readUntil(viaA, key, 'two', 1_000)).toBeLessThan(1_000);
    expect(await readUntil(viaB, key, 'two', 1_000)).toBeLessThan(1_000);
    expect(await a.metric('dbproxy_redis_cache_flushes_total', { reason: 'tracker_lost' })).toBeGreaterThan(flushes);
    // Fills resume with the new trackers, whose invalidations work again.
    for (const edge of [a, b]) await waitFor(async () => (await edge.metric('dbproxy_redis_cache_trackers', { state: 'ready' })) === 1, { timeoutMs: 5_000, description: 'a new tracker' });
    await servedFromCache(a, viaA, key);
    await direct.set(key, 'three');
    await readUntil(viaA, key, 'three');
  });

  it('two edges sharing the server stay coherent: a write through one is read through the other within the tracking latency', async () => {
    const key = `${prefix}shared`;
    await direct.set(key, '0');
    const hitsB = await b.metric('dbproxy_redis_cache_hits_total');
    const latencies: number[] = [];
    for (let n = 1; n <= 30; n++) {
      await viaB.get(key);
      await viaB.get(key); // cached in B now (a hit, or a fill when admission sampled)
      if (n % 2 === 0) expect(await viaA.set(key, String(n))).toBe('OK');
      else await direct.set(key, String(n));
      latencies.push(await readUntil(viaB, key, String(n)));
      expect(await viaA.get(key)).toBe(String(n));
    }
    expect(await b.metric('dbproxy_redis_cache_hits_total')).toBeGreaterThan(hitsB + 20);
    expect(Math.max(...latencies)).toBeLessThan(3_000);
  });

  it('refuses a client CLIENT TRACKING with a clear error', async () => {
    await expect(viaA.call('CLIENT', 'TRACKING', 'ON')).rejects.toThrow(/not supported in command mode/);
    await expect(viaA.call('CLIENT', 'CACHING', 'YES')).rejects.toThrow(/not supported in command mode/);
  });
});
