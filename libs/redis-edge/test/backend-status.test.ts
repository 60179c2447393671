// Backend status through redis-edge (connection mode, beside the real topology service) against
// real Redis, seen from ioredis clients and CLIENT LIST on the servers: offline_soft keeps an
// existing read-only session on its replica and sends new ones to the primary; offline_hard closes
// the replica's sessions now. Status changes arrive as new configuration epochs.
import { Redis } from 'ioredis';
import { KvRecords, openRecords } from '@dbproxy/bus';
import { documentHash } from '@dbproxy/runtime';
import { startRedis, waitFor, type RedisServer, type ReplicatedServers } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let servers: ReplicatedServers<RedisServer>;
let edge: EdgeHarness;
let replica: Redis;

beforeAll(async () => {
  servers = await startRedis({ replicas: 1 });
  edge = await startEdge({
    mode: 'connection',
    backends: [
      { name: 'r1', port: servers.primary.port, role: 'primary' },
      { name: 'r2', port: servers.replicas[0]!.port, role: 'replica' },
    ],
  });
  replica = new Redis({ host: '127.0.0.1', port: servers.replicas[0]!.port });
});

afterAll(async () => {
  replica?.disconnect();
  await edge?.stop();
  await servers?.destroy();
});

const roleOf = async (c: Redis): Promise<string> => ((await c.call('ROLE')) as unknown[])[0] as string;

/** Sessions on the replica named by this test's clients (CLIENT SETNAME passes through connection mode). */
async function sessionsOnReplica(): Promise<number> {
  const list = (await replica.call('CLIENT', 'LIST')) as string;
  return list.split('\n').filter((line) => line.includes('name=status-test ')).length;
}

async function setStatus(name: string, status: string): Promise<void> {
  const store = await openRecords(edge.runtime.bus, KvRecords.config);
  const current = await store.get({});
  const document = structuredClone(current?.value?.config as Record<string, unknown>);
  for (const b of document['redis_backends'] as Record<string, unknown>[]) if (b['name'] === name) b['status'] = status;
  await store.put({}, { config: document, hash: documentHash(document), author: 'test', appliedAt: new Date().toISOString(), comment: `${name} ${status}` }, { expectedRevision: current?.revision ?? 0 });
  await waitFor(async () => (await edge.topology()).snapshot?.shards.some((s) => s.backends.some((b) => b.name === name && b.status === status)) || null, { description: `${name} ${status} in the snapshot` });
}

it('offline_soft replica: an existing read-only session stays on it, new ones go to the primary', async () => {
  const existing = edge.client({ readOnly: true });
  expect(await roleOf(existing)).toBe('slave');
  await setStatus('r2', 'offline_soft');
  // the edge follows topology's snapshot: give its view the new generation
  await waitFor(async () => {
    const probe = edge.client({ readOnly: true });
    const role = await roleOf(probe);
    probe.disconnect();
    return role === 'master' || null;
  }, { description: 'new read-only sessions on the primary' });
  expect(await roleOf(existing)).toBe('slave');
  existing.disconnect();
  await setStatus('r2', 'online');
});

it('offline_hard replica: its sessions are closed now; new read-only sessions go to the primary', async () => {
  await waitFor(async () => {
    const probe = edge.client({ readOnly: true });
    const role = await roleOf(probe);
    probe.disconnect();
    return role === 'slave' || null;
  }, { description: 'read-only sessions back on the replica' });
  const existing = edge.client({ readOnly: true, retryStrategy: () => null, connectionName: 'status-test' });
  existing.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => existing.once('end', () => resolve()));
  expect(await roleOf(existing)).toBe('slave');
  expect(await sessionsOnReplica()).toBe(1);
  await setStatus('r2', 'offline_hard');
  await closed;
  await waitFor(async () => (await sessionsOnReplica()) === 0 || null, { timeoutMs: 3000, description: 'no edge session left on the replica' });
  const fresh = edge.client({ readOnly: true });
  expect(await roleOf(fresh)).toBe('master');
  fresh.disconnect();
});
