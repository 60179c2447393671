// Command-mode bounds and policies: cross-shard writes refused unless enabled, outstanding
// replies, the query buffer limit, subscriptions and blocking leases per node, keyless commands.
import { startRedis, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';
import { RawClient } from './raw-client';

jest.setTimeout(120_000);

describe('command mode bounds and policies', () => {
  let a: ReplicatedServers<RedisServer>;
  let b: ReplicatedServers<RedisServer>;
  let edge: EdgeHarness;

  beforeAll(async () => {
    [a, b] = await Promise.all([startRedis({ replicas: 0 }), startRedis({ replicas: 0 })]);
    edge = await startEdge({
      mode: 'command',
      redis: 'max_outstanding_replies = 4\nquery_buffer_limit_bytes = 65536\nmax_subscriptions = 2\nmax_blocking_leases_per_node = 1',
      sharding: 'default_shard = "a"\nmap = { kind = "hash", shards = ["a", "b"] }',
      backends: [
        { name: 'a1', port: a.primary.port, role: 'primary', shard: 'a' },
        { name: 'b1', port: b.primary.port, role: 'primary', shard: 'b' },
      ],
    });
  });
  afterAll(async () => {
    await edge?.stop();
    await Promise.all([a?.destroy(), b?.destroy()]);
  });

  it('refuses writes across shards unless redis.cross_shard_writes is on, and still splits reads', async () => {
    const c = edge.client();
    await expect(c.mset('x:1', '1', 'x:2', '2', 'x:3', '3', 'x:4', '4')).rejects.toThrow("CROSSSLOT 'MSET' spans several shards and would not be atomic");
    await expect(c.del('x:1', 'x:2', 'x:3', 'x:4')).rejects.toThrow('CROSSSLOT');
    expect(await c.mset('{x}1', '1', '{x}2', '2')).toBe('OK');
    for (const k of ['x:1', 'x:2', 'x:3', 'x:4']) await c.set(k, k);
    expect(await c.mget('x:1', 'x:2', 'x:3', 'x:4', '{x}1')).toEqual(['x:1', 'x:2', 'x:3', 'x:4', '1']);
    await expect(c.call('SUNIONSTORE', 'x:dest', 'x:1', 'x:2', 'x:3', 'x:4')).rejects.toThrow("CROSSSLOT Keys in request don't hash to the same shard");
    expect(await edge.metric('dbproxy_redis_rejected_commands_total', { reason: 'cross_shard_write' })).toBeGreaterThan(0);
  });

  it('keeps at most max_outstanding_replies in flight and still answers a long pipeline in order', async () => {
    const raw = await RawClient.open(edge.rwPort);
    const n = 2000;
    raw.send(...Array.from({ length: n }, (_, i) => ['SET', `p:${i % 50}`, `${i}`]), ...Array.from({ length: n }, (_, i) => ['ECHO', `${i}`]));
    const replies = await raw.texts(2 * n);
    expect(replies.slice(0, n).every((r) => r === 'OK')).toBe(true);
    expect(replies.slice(n)).toEqual(Array.from({ length: n }, (_, i) => `${i}`));
    raw.close();
    expect(await edge.metric('dbproxy_redis_backpressure_pauses_total', { reason: 'outstanding' })).toBeGreaterThan(0);
  });

  it('answers every command of a client that half-closed after sending them, then closes', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.send(...Array.from({ length: 50 }, (_, i) => ['SET', `half:${i}`, `${i}`]), ['MGET', 'half:1', 'half:2'], ['ECHO', 'last']);
    raw.end();
    const replies = await raw.texts(52);
    expect(replies.slice(50)).toEqual([['1', '2'], 'last']);
    expect(await raw.waitClosed()).toBe(true);
  });

  it('closes a client whose pending command exceeds the query buffer limit, with a protocol error', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['SET', 'big', Buffer.alloc(100_000, 'x')]);
    const [reply] = await raw.texts(1);
    expect(reply).toMatch(/^-ERR Protocol error: pending request of \d+ bytes exceeds the query buffer limit of 65536 bytes$/);
    expect(await raw.waitClosed()).toBe(true);
  });

  it('bounds subscriptions per session and blocking leases per node', async () => {
    const sub = await RawClient.open(edge.rwPort);
    sub.send(['SUBSCRIBE', 'c1', 'c2', 'c3']);
    expect(await sub.texts(1)).toEqual(['-ERR too many subscriptions in this session (redis.max_subscriptions = 2)']);
    sub.close();
    const first = await RawClient.open(edge.rwPort);
    const second = await RawClient.open(edge.rwPort);
    first.send(['BLPOP', '{q}list', '2']);
    await new Promise((r) => setTimeout(r, 100));
    second.send(['BLPOP', '{q}list', '2']);
    const [refused] = await second.texts(1);
    expect(refused).toMatch(/^-ERR no blocking connection to 127\.0\.0\.1:\d+ is free \(redis\.max_blocking_leases_per_node = 1\)$/);
    expect(await first.texts(1, 5_000)).toEqual([null]);
    first.close();
    second.close();
  });

  it('sends keyless commands to the default shard or to every shard by their COMMAND INFO request policy', async () => {
    const c = edge.client();
    await c.flushall();
    await c.mset('{k}a', '1', '{k}b', '2');
    await c.set('other', '3');
    expect(await c.dbsize()).toBe(3);
    expect((await c.keys('*')).sort()).toEqual(['other', '{k}a', '{k}b']);
    const time = (await c.call('TIME')) as string[];
    expect(time).toHaveLength(2);
    expect(await c.call('SCRIPT', 'LOAD', 'return 1')).toMatch(/^[0-9a-f]{40}$/);
    expect(await c.call('SCRIPT', 'EXISTS', 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db', '0000000000000000000000000000000000000000')).toEqual([1, 0]);
    expect(await c.randomkey()).not.toBeNull();
    expect(await c.flushdb()).toBe('OK');
    expect(await c.dbsize()).toBe(0);
  });
});
