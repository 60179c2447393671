// resp against a real two-master Redis Cluster: CLUSTER SLOTS/SHARDS in RESP2 and RESP3, MOVED, ASK, TRYAGAIN.
import { startRedisCluster, type RedisCluster, type RedisClusterNode } from '@dbproxy/testing';
import { decodeReply, encodeCommand, parseClusterShards, parseClusterSlots, readIntegerReply, redirectOfReply, ReplyFlag } from '../src';
import { RespClient } from './resp-client';

let cluster: RedisCluster;
const clients: RespClient[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 2 });
}, 90_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await cluster?.destroy();
});

async function connect(node: RedisClusterNode): Promise<RespClient> {
  const client = await RespClient.connect(node.port, node.host);
  clients.push(client);
  return client;
}

/** Sends one command and returns its reply frame. */
async function call(client: RespClient, ...args: Array<string | number>): Promise<Buffer> {
  client.send(encodeCommand(args));
  return (await client.next(1))[0];
}

/** A key (with hash tag) whose slot `node` serves, and that slot. */
async function keyServedBy(client: RespClient, node: RedisClusterNode): Promise<{ tag: string; slot: number }> {
  const [first, last] = node.slots as readonly [number, number];
  for (let i = 0; ; i++) {
    const frame = await call(client, 'CLUSTER', 'KEYSLOT', `{t${i}}`);
    const slot = readIntegerReply(frame, 0, frame.length);
    if (slot >= first && slot <= last) return { tag: `{t${i}}`, slot };
  }
}

describe('Redis Cluster replies', () => {
  it('reads CLUSTER SLOTS and CLUSTER SHARDS from the running cluster, in RESP2 and RESP3', async () => {
    const [a] = cluster.masters;
    const client = await connect(a);
    const expected = cluster.masters.map((m) => ({ start: m.slots?.[0], end: m.slots?.[1], port: m.port, id: m.nodeId }));
    for (const hello of [undefined, 3]) {
      if (hello !== undefined) await call(client, 'HELLO', hello);
      const slots = parseClusterSlots(decodeReply(await call(client, 'CLUSTER', 'SLOTS')));
      const ranges = slots.map((r) => ({ start: r.start, end: r.end, port: r.master.port, id: r.master.id })).sort((x, y) => x.start - y.start);
      expect(ranges).toEqual(expected);
      expect(slots.every((r) => r.master.host === '127.0.0.1' && r.replicas.length === 0)).toBe(true);

      const shards = parseClusterShards(decodeReply(await call(client, 'CLUSTER', 'SHARDS')));
      const owners = shards.map((s) => ({ start: s.slots[0][0], end: s.slots[0][1], port: s.nodes[0].port, id: s.nodes[0].id })).sort((x, y) => x.start - y.start);
      expect(owners).toEqual(expected);
      expect(shards.every((s) => s.nodes[0].role === 'master' && s.nodes[0].health === 'online')).toBe(true);
    }
  });

  it('parses the MOVED a master answers for a key another master serves', async () => {
    const [a, b] = cluster.masters;
    const client = await connect(a);
    const { tag, slot } = await keyServedBy(client, b);
    const frame = await call(client, 'GET', `${tag}key`);
    expect(client.flags[client.flags.length - 1]).toBe(ReplyFlag.Error);
    expect(redirectOfReply(frame, 0, frame.length)).toEqual({ kind: 'moved', slot, host: b.host, port: b.port });
  });

  it('parses ASK and TRYAGAIN while a slot migrates', async () => {
    const [a, b] = cluster.masters;
    const source = await connect(a);
    const target = await connect(b);
    const { tag, slot } = await keyServedBy(source, a);
    expect(decodeReply(await call(source, 'SET', `${tag}here`, 'v'))).toEqual({ type: 'simple', value: 'OK' });
    await call(target, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', a.nodeId);
    await call(source, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', b.nodeId);
    try {
      const ask = await call(source, 'GET', `${tag}gone`);
      expect(redirectOfReply(ask, 0, ask.length)).toEqual({ kind: 'ask', slot, host: b.host, port: b.port });
      const tryagain = await call(source, 'MGET', `${tag}here`, `${tag}gone`);
      expect(redirectOfReply(tryagain, 0, tryagain.length)).toEqual({ kind: 'tryagain', message: expect.stringMatching(/^TRYAGAIN /) });
    } finally {
      await call(source, 'CLUSTER', 'SETSLOT', slot, 'STABLE');
      await call(target, 'CLUSTER', 'SETSLOT', slot, 'STABLE');
    }
  });
});
