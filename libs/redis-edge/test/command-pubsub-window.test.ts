// A subscriber that stops reading: after redis.max_pending_pushes messages toward it the proxy
// stops reading its pub/sub connections (the server buffers, as toward a slow direct client),
// and once it reads again every message arrives, in order.
import { connect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { encodeCommand, ReplyScanner } from '@dbproxy/resp';
import { startRedis, waitFor, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(90_000);

const MESSAGES = 400;
const PAYLOAD = 'p'.repeat(64 * 1024);

/** A subscriber socket that reads only when told to, counting the messages it parsed. */
async function slowSubscriber(port: number, channel: string): Promise<{ socket: Socket; messages: () => number[] }> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise((r) => socket.once('connect', r));
  const scanner = new ReplyScanner();
  let buffer = Buffer.alloc(0);
  const seen: number[] = [];
  let confirmed: () => void = () => undefined;
  const subscribed = new Promise<void>((r) => (confirmed = r));
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    const batch = scanner.scan(buffer, 0, buffer.length);
    for (let i = 0; i < batch.count; i++) {
      const text = batch.frame(i).toString('latin1');
      if (text.includes('subscribe')) confirmed();
      const n = /\r\n(\d+):p/.exec(text);
      if (n) seen.push(Number(n[1]));
    }
    buffer = buffer.subarray(batch.consumed);
    scanner.reset();
  });
  socket.write(encodeCommand(['SUBSCRIBE', channel]));
  await subscribed;
  socket.pause();
  return { socket, messages: () => seen };
}

async function backpressureUnder(pushWindow: number): Promise<{ pauses: number; serverBuffered: number; received: number[] }> {
  const server: ReplicatedServers<RedisServer> = await startRedis({ replicas: 0 });
  const edge: EdgeHarness = await startEdge({
    mode: 'command',
    redis: `max_pending_pushes = ${pushWindow}\nclient_output_limit_bytes = 1073741824`,
    backends: [{ name: 'r1', port: server.primary.port, role: 'primary' }],
  });
  const direct = new Redis({ host: '127.0.0.1', port: server.primary.port, maxRetriesPerRequest: 0 });
  try {
    const sub = await slowSubscriber(edge.rwPort, 'slow');
    for (let i = 0; i < MESSAGES; i++) await direct.publish('slow', `${i}:${PAYLOAD}`);
    await new Promise((r) => setTimeout(r, 500));
    const pauses = (await edge.metric('dbproxy_redis_backpressure_pauses_total', { reason: 'output' })) ?? 0;
    const clients = String(await direct.client('LIST')).split('\n').filter((l) => l.includes('cmd=subscribe'));
    const serverBuffered = Math.max(0, ...clients.map((l) => Number(/omem=(\d+)/.exec(l)?.[1] ?? 0)));
    sub.socket.resume();
    await waitFor(() => sub.messages().length >= MESSAGES, { timeoutMs: 30_000, description: 'every message delivered' });
    sub.socket.destroy();
    return { pauses, serverBuffered, received: sub.messages() };
  } finally {
    direct.disconnect();
    await edge.stop();
    await server.destroy();
  }
}

describe('command mode pub/sub when the subscriber\'s backend connection is lost', () => {
  it('tells the subscriber in its protocol that its subscriptions are gone, then closes it', async () => {
    const server = await startRedis({ replicas: 0 });
    const edge = await startEdge({ mode: 'command', backends: [{ name: 'r1', port: server.primary.port, role: 'primary' }] });
    const direct = new Redis({ host: '127.0.0.1', port: server.primary.port, maxRetriesPerRequest: 0 });
    try {
      const socket = connect({ host: '127.0.0.1', port: edge.rwPort });
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      const closed = new Promise((r) => socket.once('close', r));
      socket.write(encodeCommand(['SUBSCRIBE', 'lost']));
      await waitFor(() => received.includes('subscribe'), { timeoutMs: 5_000, description: 'subscribed' });
      await direct.publish('lost', 'before');
      await waitFor(() => received.includes('before'), { timeoutMs: 5_000, description: 'first message' });
      await direct.client('KILL', 'TYPE', 'pubsub');
      await closed;
      expect(received).toMatch(/-ERR the pub\/sub connection to backend r1 \(shard "default"\) was lost: its subscriptions are gone .*subscribe again\r\n$/);
    } finally {
      direct.disconnect();
      await edge.stop();
      await server.destroy();
    }
  });
});

describe('command mode pub/sub toward a subscriber that does not read', () => {
  it('stops reading the backend after max_pending_pushes messages, then delivers every one in order', async () => {
    const bounded = await backpressureUnder(32);
    expect(bounded.pauses).toBeGreaterThan(0);
    expect(bounded.serverBuffered).toBeGreaterThan(1024 * 1024);
    expect(bounded.received).toEqual(Array.from({ length: MESSAGES }, (_, i) => i));
  });

  it('with a window larger than the burst the proxy keeps reading it all (the window is what pauses)', async () => {
    const unbounded = await backpressureUnder(1_000_000);
    expect(unbounded.pauses).toBe(0);
    expect(unbounded.serverBuffered).toBe(0);
    expect(unbounded.received.length).toBe(MESSAGES);
  });
});
