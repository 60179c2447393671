// A backend that refuses connections while topology still counts it up (health checks tolerate many
// failures): ioredis and redis-cli read a stable "-ERR backend <name> is unavailable", never the OS
// error (ECONNREFUSED) or the backend's address, in command mode and in connection mode; command
// mode logs the detail, connection mode keeps it in the session's close reason.
import fs from 'node:fs';
import { KvRecords, openRecords } from '@dbproxy/bus';
import { documentHash } from '@dbproxy/runtime';
import { startRedis, waitFor, type RedisServer, type ReplicatedServers } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';
import { redisCli } from './processes';

jest.setTimeout(120_000);

const STABLE = 'ERR backend r1 is unavailable (details in the edge log)';
let redis: ReplicatedServers<RedisServer>;
const logged: string[] = [];
const realWrite = fs.write;

/** Publishes `[health] failures_before_down`, so a refusing backend stays up in topology's view. */
async function tolerateFailedChecks(edge: EdgeHarness, count: number): Promise<void> {
  const store = await openRecords(edge.runtime.bus, KvRecords.config);
  const current = await store.get({});
  const document = structuredClone(current?.value?.config as Record<string, Record<string, unknown>>);
  (document['health'] as Record<string, unknown>)['failures_before_down'] = count;
  await store.put({}, { config: document, hash: documentHash(document), author: 'test', appliedAt: new Date().toISOString(), comment: 'health' }, { expectedRevision: current?.revision ?? 0 });
  await waitFor(() => (edge.runtime.config.current().config.health as Record<string, unknown>)['failures_before_down'] === count || null);
}

beforeAll(async () => {
  redis = await startRedis({ replicas: 0 });
  // the edge log: pino writes JSON lines to fd 1 with fs.write
  fs.write = ((fd: number, chunk: unknown, ...rest: unknown[]) => {
    if (fd === 1) logged.push(String(chunk));
    return (realWrite as (...args: unknown[]) => void)(fd, chunk, ...rest);
  }) as typeof fs.write;
});

afterAll(async () => {
  fs.write = realWrite;
  await redis?.destroy();
});

function expectStable(err: Error): void {
  expect(err.message).toBe(STABLE);
  expect(err.message).not.toMatch(/ECONN|refused/i);
  expect(err.message).not.toContain(String(redis.primary.port));
}

describe.each(['command', 'connection'] as const)('%s mode', (mode) => {
  let edge: EdgeHarness;

  beforeAll(async () => {
    if (mode === 'connection') await redis.primary.start(); // killed by the command-mode block
    edge = await startEdge({ mode, backends: [{ name: 'r1', port: redis.primary.port, role: 'primary' }] });
    await tolerateFailedChecks(edge, 100_000);
    await redis.primary.kill();
  });

  afterAll(async () => {
    await edge?.stop();
  });

  it('answers with the stable text, not the OS error or the address', async () => {
    const client = edge.client({ retryStrategy: () => null, enableReadyCheck: false });
    if (mode === 'command') expectStable((await client.get('k').catch((e: unknown) => e)) as Error);
    // connection mode answers as soon as the client connects, before any command: ioredis drops such a reply, redis-cli prints it
    const cli = await redisCli(edge.rwPort, ['GET', 'k']);
    expectStable(new Error(cli.stdout.trim()));
    if (mode === 'command') {
      await waitFor(() => logged.some((line) => line.includes('redis-edge could not open a backend connection') && line.includes('ECONNREFUSED') && line.includes(String(redis.primary.port))) || null, { description: 'the OS error in the edge log' });
    }
  });
});
