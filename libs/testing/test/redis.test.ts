// startRedis: a primary with replicas on real Redis replication, optionally password-protected.
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer, type ReplicatedServers } from '../src';

jest.setTimeout(120_000);

async function withClient<T>(server: RedisServer, work: (client: Redis) => Promise<T>, auth = true): Promise<T> {
  const password = auth ? server.password : undefined;
  const client = new Redis({
    host: server.host,
    port: server.port,
    password,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    disconnectTimeout: 100,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}

describe('startRedis', () => {
  let group: ReplicatedServers<RedisServer>;

  beforeAll(async () => {
    group = await startRedis({ replicas: 1 });
  });

  afterAll(async () => {
    await group?.destroy();
  });

  it('replicates a key written on the primary to the replica', async () => {
    const { primary, replicas } = group;
    expect(primary.port).not.toBe(6379);
    await withClient(primary, (c) => c.set('greeting', 'hello'));
    await group.waitForReplicaCatchUp();
    expect(await withClient(replicas[0], (c) => c.get('greeting'))).toBe('hello');
    const role = await withClient(replicas[0], (c) => c.info('replication'));
    expect(role).toContain('role:slave');
    expect(role).toContain(`master_port:${primary.port}`);
  });

  it('refuses writes on the replica', async () => {
    await expect(withClient(group.replicas[0], (c) => c.set('x', '1'))).rejects.toThrow(/READONLY/);
  });

  it('keeps data across stop() and start() on the same port', async () => {
    const { primary, replicas } = group;
    await withClient(primary, (c) => c.set('durable', 'yes'));
    const port = primary.port;
    await primary.stop();
    await expect(withClient(primary, (c) => c.ping())).rejects.toThrow();
    await primary.start();
    expect(primary.port).toBe(port);
    expect(await withClient(primary, (c) => c.get('durable'))).toBe('yes');
    await withClient(primary, (c) => c.set('after', 'restart'));
    await group.waitForReplicaCatchUp();
    expect(await withClient(replicas[0], (c) => c.get('after'))).toBe('restart');
  });

  it('kill() takes the replica down at once and start() resynchronises it', async () => {
    const { primary, replicas } = group;
    await replicas[0].kill();
    await withClient(primary, (c) => c.set('while', 'down'));
    await replicas[0].start();
    await group.waitForReplicaCatchUp();
    expect(await withClient(replicas[0], (c) => c.get('while'))).toBe('down');
  });
});

describe('startRedis with a password', () => {
  it('requires AUTH on primary and replica, and the replica still syncs', async () => {
    const group = await startRedis({ replicas: 1, password: 's3cret' });
    try {
      const { primary, replicas } = group;
      expect(primary.password).toBe('s3cret');
      await expect(withClient(primary, (c) => c.get('k'), false)).rejects.toThrow(/NOAUTH/);
      await withClient(primary, (c) => c.set('k', 'v'));
      await group.waitForReplicaCatchUp();
      expect(await withClient(replicas[0], (c) => c.get('k'))).toBe('v');
    } finally {
      await group.destroy();
    }
    expect(existsSync(group.dir)).toBe(false);
  });

  it('rejects a password it cannot put in redis.conf', async () => {
    await expect(startRedis({ password: 'has space' })).rejects.toMatchObject({ code: 'DBP_ERR_TESTING_INVALID_OPTION' });
  });
});
