// Connection mode: DBPROXY.SHARD selects the shard (value map), then bytes flow unchanged -
// pipelines, MULTI/EXEC, pub/sub, RESP3 pushes, scripts, AUTH/ACL - a client without a shard
// command goes to the default shard, and the read-only listener goes to a replica.
import { Redis } from 'ioredis';
import { startRedis, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';
import { redisCli } from './processes';
import { RawClient } from './raw-client';

jest.setTimeout(120_000);

describe('connection mode', () => {
  let a: ReplicatedServers<RedisServer>;
  let b: ReplicatedServers<RedisServer>;
  let edge: EdgeHarness;

  beforeAll(async () => {
    [a, b] = await Promise.all([startRedis({ replicas: 1 }), startRedis({ replicas: 0, password: 'b-secret' })]);
    const backends = [
      { name: 'a1', port: a.primary.port, role: 'primary' as const, shard: 'a' },
      { name: 'a2', port: a.replicas[0].port, role: 'replica' as const, shard: 'a' },
      { name: 'b1', port: b.primary.port, role: 'primary' as const, shard: 'b', password: 'b-secret' },
    ];
    edge = await startEdge({ mode: 'connection', backends, sharding: 'missing = "default"\ndefault_shard = "a"\nmap = { kind = "value", values = { "eu" = "a", "us" = "b" } }' });
  });
  afterAll(async () => {
    await edge?.stop();
    await Promise.all([a?.destroy(), b?.destroy()]);
  });

  it('selects the shard with DBPROXY.SHARD and then pipes pipelines, MULTI/EXEC and scripts unchanged', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['DBPROXY.SHARD', 'eu'], ['SET', 'conn:k', 'v'], ['MULTI'], ['INCR', 'conn:n'], ['GET', 'conn:k'], ['EXEC'], ['EVAL', "return redis.call('GET', KEYS[1])", '1', 'conn:k'], ['ROLE']);
    const replies = await raw.texts(8);
    expect(replies.slice(0, 7)).toEqual(['OK', 'OK', 'OK', 'QUEUED', 'QUEUED', [1, 'v'], 'v']);
    expect((replies[7] as unknown[])[0]).toBe('master');
    raw.close();
    const direct = new Redis({ host: '127.0.0.1', port: a.primary.port });
    expect(await direct.get('conn:k')).toBe('v');
    direct.disconnect();
    expect(await edge.metric('dbproxy_redis_shard_selections_total', { shard: 'a', how: 'shard_command' })).toBeGreaterThan(0);
  });

  it('passes AUTH and RESP3 pushes through to a password-protected shard', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['DBPROXY.SHARD', 'us'], ['GET', 'x'], ['HELLO', '3', 'AUTH', 'default', 'b-secret'], ['SUBSCRIBE', 'alerts']);
    const [ok, noauth, hello, confirm] = await raw.replies(4);
    expect(ok).toEqual({ type: 'simple', value: 'OK' });
    expect(noauth.type === 'error' && noauth.message).toMatch(/^NOAUTH/);
    expect(hello.type).toBe('map');
    expect(confirm.type).toBe('push');
    const publisher = new Redis({ host: '127.0.0.1', port: b.primary.port, password: 'b-secret' });
    for (let i = 0; i < 100; i++) await publisher.publish('alerts', `a${i}`);
    const pushes = await raw.replies(100);
    expect(pushes.every((p) => p.type === 'push')).toBe(true);
    expect(pushes.map((p) => (p.type === 'push' && p.items[2].type === 'bulk' ? p.items[2].value.toString() : ''))).toEqual(Array.from({ length: 100 }, (_, i) => `a${i}`));
    publisher.disconnect();
    raw.close();
  });

  it('passes a half-close on to the backend and still delivers its replies', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['DBPROXY.SHARD', 'eu'], ['SET', 'half', '1'], ['GET', 'half']);
    raw.end();
    expect(await raw.texts(3)).toEqual(['OK', 'OK', '1']);
    expect(await raw.waitClosed()).toBe(true);
  });

  it('relays values larger than a socket buffer both ways, byte for byte, while the reader lags', async () => {
    // reads are written on from the shared scratch; what the kernel does not take must be copied before the next read reuses it
    const client = new Redis({ host: '127.0.0.1', port: edge.rwPort });
    const value = Buffer.alloc(6 * 1024 * 1024);
    for (let i = 0; i < value.length; i++) value[i] = (i * 7919) % 251;
    expect(await client.set('conn:big', value)).toBe('OK');
    const pipeline = client.pipeline();
    for (let i = 0; i < 4; i++) pipeline.getBuffer('conn:big');
    const results = (await pipeline.exec()) as [Error | null, Buffer][];
    expect(results.map(([err, got]) => err === null && Buffer.compare(got, value) === 0)).toEqual([true, true, true, true]);
    await client.quit();
  });

  it('sends a client without DBPROXY.SHARD to the default shard', async () => {
    const client = new Redis({ host: '127.0.0.1', port: edge.rwPort });
    await client.set('conn:default', 'here');
    const direct = new Redis({ host: '127.0.0.1', port: a.primary.port });
    expect(await direct.get('conn:default')).toBe('here');
    client.disconnect();
    direct.disconnect();
  });

  it('sends the read-only listener to a replica', async () => {
    const cli = await redisCli(edge.roPort, [], 'DBPROXY.SHARD eu\nROLE\n');
    expect(cli.stdout.split('\n').slice(0, 2)).toEqual(['OK', 'slave']);
  });
});
