// A BLPOP still blocked at proxy.shutdown_timeout_seconds: the runtime's shutdown (what SIGTERM
// runs) answers it with `-ERR the proxy is shutting down` before closing, in both modes.
import { startRedis, type RedisServer, type ReplicatedServers } from '@dbproxy/testing';
import { startEdge } from './harness';

jest.setTimeout(60_000);

let servers: ReplicatedServers<RedisServer>;

beforeAll(async () => {
  servers = await startRedis({ replicas: 0 });
});

afterAll(async () => {
  await servers?.destroy();
});

it.each(['command', 'connection'] as const)('%s mode: a blocked BLPOP gets -ERR at the shutdown deadline', async (mode) => {
  const edge = await startEdge({ mode, backends: [{ name: 'r1', port: servers.primary.port, role: 'primary' }], extra: '[proxy]\nshutdown_timeout_seconds = 1' });
  try {
    const client = edge.client({ maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    await client.ping();
    const blocked = client.blpop(`dbproxy-faults-shutdown-${mode}`, 30).then(
      () => undefined,
      (err: unknown) => err,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await edge.runtime.shutdown('SIGTERM');
    expect(await blocked).toMatchObject({ message: 'ERR the proxy is shutting down' });
  } finally {
    await edge.stop();
  }
});
