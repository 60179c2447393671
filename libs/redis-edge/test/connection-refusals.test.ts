// Connection mode refusals (missing = "refuse", range map): a missing, invalid or unmapped
// shard value gets -ERR before any backend is contacted, and maxclients is enforced in Redis's words.
import { startRedis, waitFor, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';
import { RawClient } from './raw-client';

jest.setTimeout(120_000);

describe('connection mode refusals', () => {
  let a: ReplicatedServers<RedisServer>;
  let b: ReplicatedServers<RedisServer>;
  let strict: EdgeHarness;

  beforeAll(async () => {
    [a, b] = await Promise.all([startRedis({ replicas: 0 }), startRedis({ replicas: 0, password: 'b-secret' })]);
    strict = await startEdge({
      mode: 'connection',
      backends: [
        { name: 'a1', port: a.primary.port, role: 'primary', shard: 'a' },
        { name: 'b1', port: b.primary.port, role: 'primary', shard: 'b', password: 'b-secret' },
      ],
      redis: 'max_connections = 3',
      sharding: 'missing = "refuse"\ndefault_shard = "a"\nmap = { kind = "range", ranges = [{ to = 1000, shard = "a" }, { from = 1000, to = 2000, shard = "b" }] }',
    });
  });
  afterAll(async () => {
    await strict?.stop();
    await Promise.all([a?.destroy(), b?.destroy()]);
  });

  it('refuses a missing, invalid or unmapped shard value with -ERR before any backend authentication', async () => {
    const cases: [string[][], string][] = [
      [[['GET', 'x']], 'ERR DBPROXY.SHARD <value> must be the first command on this proxy (redis.sharding.missing = "refuse")'],
      [[['DBPROXY.SHARD']], "ERR wrong number of arguments for 'dbproxy.shard' command"],
      [[['DBPROXY.SHARD', 'abc']], 'ERR invalid shard value "abc": a range map needs an integer'],
      [[['DBPROXY.SHARD', '5000']], 'ERR shard value "5000" maps to no shard'],
    ];
    for (const [commands, expected] of cases) {
      const raw = await RawClient.open(strict.rwPort);
      raw.send(...commands, ['AUTH', 'b-secret']);
      expect(await raw.texts(1)).toEqual([`-${expected}`]);
      expect(await raw.waitClosed()).toBe(true);
    }
    // a range value in b's range reaches b, where the client authenticates itself
    const raw = await RawClient.open(strict.rwPort);
    raw.send(['DBPROXY.SHARD', '1500'], ['AUTH', 'b-secret'], ['SET', 'range:k', '1']);
    expect(await raw.texts(3)).toEqual(['OK', 'OK', 'OK']);
    raw.close();
    expect(await strict.metric('dbproxy_redis_shard_refusals_total')).toBeGreaterThanOrEqual(4);
  });

  it('enforces maxclients with Redis words', async () => {
    // the previous test's connections must be gone (closed on both sides) before the count starts
    const sessions = () => strict.metric('dbproxy_redis_sessions');
    await waitFor(async () => (await sessions()) === 0, { timeoutMs: 20_000, description: 'no open sessions' });
    const held = await Promise.all([0, 1, 2].map(() => RawClient.open(strict.rwPort)));
    await waitFor(async () => (await sessions()) === 3, { timeoutMs: 20_000, description: 'three admitted sessions' });
    const over = await RawClient.open(strict.rwPort);
    expect(await over.texts(1)).toEqual(['-ERR max number of clients reached']);
    held.forEach((h) => h.close());
    over.close();
  });
});
