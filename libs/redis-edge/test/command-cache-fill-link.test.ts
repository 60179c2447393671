// The reply cache's fill connection ([redis.cache], one per master): fills go there behind CLIENT
// CACHING YES, the shared connection never has tracking enabled, and a session still reads its own
// writes: a fill is sent only when none of the session's commands is in flight (its SET held on the
// shared connection by CLIENT PAUSE WRITE cannot be overtaken by the GET behind it), and the session
// holds its later commands until the fill's reply left (a SET behind a fill cannot run first while
// the fill connection is still opening); no fill goes on the fill connection while a write of any
// session is still in flight on the master's shared connection. Losing the fill connection flushes the cache (the server
// forgets what that connection tracked).
import { Redis } from 'ioredis';
import { startRedis, waitFor, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { servedFromCache } from './cache-reads';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

const CACHE = '[redis.cache]\nenabled = true\nmax_bytes = 1048576\nmax_age_seconds = 300\n';
const prefix = `fill-link:${process.pid}:`;

let servers: ReplicatedServers<RedisServer>;
let edge: EdgeHarness;
let direct: Redis;
let client: Redis;

interface ClientRow {
  readonly id: string;
  readonly flags: string;
  readonly redir: string;
  readonly cmd: string;
}

async function clientList(): Promise<ClientRow[]> {
  const text = (await direct.client('LIST')) as string;
  return text
    .trim()
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=') as [string, string])) as unknown as ClientRow);
}

/** The connections with tracking enabled (flag t). */
async function trackingConnections(): Promise<ClientRow[]> {
  return (await clientList()).filter((c) => c.flags.includes('t'));
}

/** Reads `key` through the edge until a read is a hit (it is in the cache). */
function cachedThroughEdge(key: string): Promise<void> {
  return servedFromCache(edge, client, key);
}

beforeAll(async () => {
  servers = await startRedis({ replicas: 0 });
  direct = new Redis({ host: '127.0.0.1', port: servers.primary.port, maxRetriesPerRequest: 0 });
  edge = await startEdge({ mode: 'command', backends: [{ name: 'r1', port: servers.primary.port, role: 'primary' }], extra: CACHE });
  await waitFor(async () => (await edge.metric('dbproxy_redis_cache_trackers', { state: 'ready' })) === 1, { timeoutMs: 10_000, description: 'the tracker is ready' });
  client = edge.client();
});

afterAll(async () => {
  client?.disconnect();
  direct?.disconnect();
  await edge?.stop();
  await servers?.destroy();
});

describe('reply cache fill connection', () => {
  it('fills on a connection of its own: only that one has tracking, the shared connection never does', async () => {
    const key = `${prefix}own`;
    await direct.set(key, 'v1');
    await cachedThroughEdge(key);
    await client.set(`${prefix}other`, 'x'); // runs on the shared connection
    const tracking = await trackingConnections();
    expect(tracking).toHaveLength(1);
    const tracker = (await clientList()).find((c) => c.id === tracking[0].redir);
    expect(tracker).toBeDefined();
    const shared = (await clientList()).filter((c) => c.cmd === 'set');
    expect(shared.length).toBeGreaterThan(0);
    for (const c of shared) {
      expect(c.flags).not.toContain('t');
      expect(c.redir).toBe('-1');
    }
  });

  it('a GET pipelined behind its own SET is not sent on the fill connection: it reads the SET even while the server holds writes', async () => {
    const key = `${prefix}ryw`;
    await direct.set(key, 'v1');
    await cachedThroughEdge(key);
    // Writes wait on the server (the shared connection stops at the SET); reads on other connections go on.
    await direct.call('CLIENT', 'PAUSE', '400', 'WRITE');
    const replies = await client.pipeline().set(key, 'v2').get(key).exec();
    expect(replies?.map(([err, v]) => err ?? v)).toEqual(['OK', 'v2']);
    expect(await client.get(key)).toBe('v2');
  });

  it("a GET does not fill on the fill connection while another session's write is in flight: it reads that write", async () => {
    const key = `${prefix}fence`;
    await direct.set(key, 'v1');
    await cachedThroughEdge(key);
    const writer = edge.client();
    try {
      await writer.ping();
      // The server holds writes: the writer's SET waits on the shared connection (invalidated at dispatch).
      await direct.call('CLIENT', 'PAUSE', '400', 'WRITE');
      const written = writer.set(key, 'v2');
      await waitFor(async () => (await edge.metric('dbproxy_redis_cache_invalidations_total')) > 0, { timeoutMs: 2_000, description: 'the SET dispatched' });
      // Not a fill that could run before the SET: this GET goes behind it and reads it.
      expect(await client.get(key)).toBe('v2');
      expect(await written).toBe('OK');
      expect(await writer.get(key)).toBe('v2');
    } finally {
      writer.disconnect();
    }
  });

  it('a SET pipelined behind a fill waits for it: the GET reads the value before the SET', async () => {
    const key = `${prefix}hold`;
    await direct.set(key, 'v1');
    await cachedThroughEdge(`${prefix}warm`); // a fill connection exists
    // Kill it: the next fill opens a new one (connect and CLIENT TRACKING first), while the shared connection is ready at once.
    const [fill] = await trackingConnections();
    const flushes = await edge.metric('dbproxy_redis_cache_flushes_total', { reason: 'fill_link_lost' });
    await direct.client('KILL', 'ID', fill.id);
    await waitFor(async () => (await edge.metric('dbproxy_redis_cache_flushes_total', { reason: 'fill_link_lost' })) > flushes, { timeoutMs: 5_000, description: 'the lost fill connection flushed the cache' });
    const fills = await edge.metric('dbproxy_redis_cache_fills_total');
    const replies = await client.pipeline().get(key).set(key, 'v2').exec();
    expect(replies?.map(([err, v]) => err ?? v)).toEqual(['v1', 'OK']);
    expect(await edge.metric('dbproxy_redis_cache_fills_total')).toBe(fills + 1); // the GET was a fill
    expect(await client.get(key)).toBe('v2');
  });

  it('losing the fill connection flushes the cache: a key it filled is read again after a direct write', async () => {
    const key = `${prefix}lost`;
    await direct.set(key, 'v1');
    await cachedThroughEdge(key);
    const [fill] = await trackingConnections();
    const flushes = await edge.metric('dbproxy_redis_cache_flushes_total', { reason: 'fill_link_lost' });
    await direct.client('KILL', 'ID', fill.id);
    await waitFor(async () => (await edge.metric('dbproxy_redis_cache_flushes_total', { reason: 'fill_link_lost' })) > flushes, { timeoutMs: 5_000, description: 'the lost fill connection flushed the cache' });
    // The server no longer tracks the key for this edge: without the flush the old value would stay cached.
    await direct.set(key, 'v2');
    expect(await client.get(key)).toBe('v2');
  });
});
