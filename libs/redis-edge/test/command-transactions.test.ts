// MULTI/EXEC through command mode against the server's own refusals: what a transaction the server
// would abort or never open answers through the proxy, beside a direct connection.
import { Redis } from 'ioredis';
import { startRedis, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(60_000);

const txOf = (client: Redis, key: string) => client.multi().set(key, 'written').exec().then(
  (replies) => `ran: ${JSON.stringify(replies)}`,
  (err: Error) => err.message,
);

describe('command mode transactions and the server\'s queue-time errors', () => {
  let server: ReplicatedServers<RedisServer>;
  let edge: EdgeHarness;
  let direct: Redis;

  beforeAll(async () => {
    server = await startRedis({ replicas: 0 });
    edge = await startEdge({ mode: 'command', backends: [{ name: 'r1', port: server.primary.port, role: 'primary' }] });
    direct = new Redis({ host: '127.0.0.1', port: server.primary.port, maxRetriesPerRequest: 0 });
  });
  afterAll(async () => {
    direct?.disconnect();
    await edge?.stop();
    await server?.destroy();
  });

  it('aborts a transaction whose command the server refuses for memory (-OOM), as Redis does', async () => {
    await direct.set('tx:ballast', 'x'.repeat(256 * 1024));
    const used = Number(/used_memory:(\d+)/.exec(await direct.info('memory'))?.[1]);
    await direct.config('SET', 'maxmemory-policy', 'noeviction');
    await direct.config('SET', 'maxmemory', String(used - 64 * 1024));
    try {
      const viaDirect = await txOf(direct, 'tx:oom-direct');
      const viaProxy = await txOf(edge.client(), 'tx:oom-proxy');
      expect(viaDirect).toMatch(/^EXECABORT/);
      expect(viaProxy).toBe(viaDirect);
      expect(await direct.exists('tx:oom-direct', 'tx:oom-proxy')).toBe(0);
    } finally {
      await direct.config('SET', 'maxmemory', '256mb');
      await direct.del('tx:ballast');
    }
  });

  it('answers a transaction whose MULTI the server refuses (an ACL without MULTI) as the server does', async () => {
    await direct.acl('SETUSER', 'nomulti', 'on', '>nomulti-pw', '~*', '+@all', '-multi');
    const other = new Redis({ host: '127.0.0.1', port: server.primary.port, maxRetriesPerRequest: 0 });
    try {
      await other.auth('nomulti', 'nomulti-pw');
      const client = edge.client();
      await client.auth('nomulti', 'nomulti-pw');
      const viaDirect = await txOf(other, 'tx:acl-direct');
      const viaProxy = await txOf(client, 'tx:acl-proxy');
      expect(viaProxy).toBe(viaDirect);
      expect(await direct.get('tx:acl-proxy')).toBe(await direct.get('tx:acl-direct'));
    } finally {
      other.disconnect();
      await direct.acl('DELUSER', 'nomulti');
      await direct.del('tx:acl-direct', 'tx:acl-proxy');
    }
  });

  it('aborts a transaction sent while a script runs with the server\'s BUSY abort, and nothing of it runs afterwards', async () => {
    await direct.config('SET', 'busy-reply-threshold', '100');
    const stateful = edge.client({ connectionName: 'tx-stateful' });
    const other = new Redis({ host: '127.0.0.1', port: server.primary.port, maxRetriesPerRequest: 0 });
    await Promise.all([stateful.ping(), other.ping()]);
    const script = edge.client().eval('while true do end', 0).catch((err: Error) => err.message);
    await new Promise((r) => setTimeout(r, 400));
    try {
      const viaDirect = await txOf(other, 'tx:busy');
      expect(viaDirect).toMatch(/BUSY/);
      expect(await txOf(stateful, 'tx:busy')).toBe(viaDirect);
    } finally {
      other.disconnect();
      await direct.script('KILL');
      await script;
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(await direct.exists('tx:busy')).toBe(0);
  });
});
