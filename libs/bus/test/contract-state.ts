// Bus contract, state half: KV (revisions, compare-and-set, keys, watch) and typed messages.
import { channel } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';
import {
  droppedMessageCounts,
  openRecords,
  publishMessage,
  requestMessage,
  serveMessages,
  subscribeMessages,
  KvRecords,
  Subjects,
  type BusMessageDropped,
  type KvEntry,
} from '../src/index';
import { bytes, ContractFailure, eventually, heartbeat, sleep, text, type ContractContext } from './contract-support';

export function stateContract(ctx: ContractContext): void {
  describe('kv', () => {
    const bucketName = (): string => `b${ctx.prefix}`;

    it('puts and gets values with one increasing revision per bucket', async () => {
      const kv = await (await ctx.open('a')).kv(bucketName());
      expect(await kv.get('missing')).toBeUndefined();
      const r1 = await kv.put('current', bytes('one'));
      const r2 = await kv.put('other', bytes('two'));
      const r3 = await kv.put('current', bytes('three'));
      expect([r1, r2, r3]).toEqual([1, 2, 3]);
      const entry = await kv.get('current');
      expect({ key: entry?.key, revision: entry?.revision, value: text(entry?.value) }).toEqual({ key: 'current', revision: 3, value: 'three' });
      expect(entry?.created).toBeInstanceOf(Date);
    });

    it('compares and sets on the expected revision', async () => {
      const kv = await (await ctx.open('a')).kv(bucketName());
      const created = await kv.put('current', bytes('v1'), { expectedRevision: 0 });
      await expect(kv.put('current', bytes('dup'), { expectedRevision: 0 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_KV_REVISION_MISMATCH' });
      const updated = await kv.put('current', bytes('v2'), { expectedRevision: created });
      await expect(kv.put('current', bytes('stale'), { expectedRevision: created })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_KV_REVISION_MISMATCH' });
      await expect(kv.put('absent', bytes('x'), { expectedRevision: 7 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_KV_REVISION_MISMATCH' });
      expect(updated).toBeGreaterThan(created);
      expect(text((await kv.get('current'))?.value)).toBe('v2');
    });

    it('deletes keys, lists live keys by pattern, and recreates a deleted key with expectedRevision 0', async () => {
      const kv = await (await ctx.open('a')).kv(bucketName());
      for (const key of ['edges.mysql.a', 'edges.mysql.b', 'edges.pg.a', 'current']) await kv.put(key, bytes(key));
      await kv.delete('edges.mysql.b');
      expect(await kv.get('edges.mysql.b')).toBeUndefined();
      expect(await kv.keys()).toEqual(['current', 'edges.mysql.a', 'edges.pg.a']);
      expect(await kv.keys('edges.*.a')).toEqual(['edges.mysql.a', 'edges.pg.a']);
      expect(await kv.keys('edges.>')).toEqual(['edges.mysql.a', 'edges.pg.a']);
      const again = await kv.put('edges.mysql.b', bytes('back'), { expectedRevision: 0 });
      expect((await kv.get('edges.mysql.b'))?.revision).toBe(again);
    });

    it('watches: current values first in revision order, then updates and deletes', async () => {
      const [writer, reader] = [await ctx.open('writer'), await ctx.open('reader')];
      const wkv = await writer.kv(bucketName());
      const rkv = await reader.kv(bucketName());
      await wkv.put('topology.mysql', bytes('m1'));
      await wkv.put('topology.redis', bytes('r1'));
      await wkv.put('unrelated', bytes('u1'));
      await wkv.put('topology.mysql', bytes('m2'));
      const seen: KvEntry[] = [];
      const watch = rkv.watch('topology.*', (e) => void seen.push(e));
      await watch.ready;
      const view = (): Array<[string, number, string | undefined]> => seen.map((e) => [e.key, e.revision, text(e.value)]);
      expect(view()).toEqual([
        ['topology.redis', 2, 'r1'],
        ['topology.mysql', 4, 'm2'],
      ]);
      await wkv.put('topology.pg', bytes('p1'));
      await wkv.put('unrelated', bytes('u2'));
      await wkv.delete('topology.redis');
      await eventually(() => seen.length === 4);
      expect(view().slice(2)).toEqual([
        ['topology.pg', 5, 'p1'],
        ['topology.redis', 7, undefined],
      ]);
      watch.unsubscribe();
      await wkv.put('topology.pg', bytes('p2'));
      await sleep(100);
      expect(seen).toHaveLength(4);
    });

    it('keeps a watch alive when its handler throws', async () => {
      const kv = await (await ctx.open('a')).kv(bucketName());
      const seen: string[] = [];
      const before = droppedMessageCounts()['handler-error'];
      await kv.watch('>', (e) => {
        if (text(e.value) === 'bad') throw ContractFailure('watch');
        seen.push(e.key);
      }).ready;
      await kv.put('a', bytes('bad'));
      await kv.put('b', bytes('good'));
      await eventually(() => seen.length === 1);
      expect(seen).toEqual(['b']);
      expect(droppedMessageCounts()['handler-error']).toBe(before + 1);
    });
  });

  describe('typed messages', () => {
    it('delivers valid messages with their subject parameters and drops malformed ones, counted and reported', async () => {
      const [pub, sub] = [await ctx.open('pub'), await ctx.open('sub')];
      const reports: BusMessageDropped[] = [];
      const onDrop = (event: unknown): void => void reports.push(event as BusMessageDropped);
      channel(Channels.busMessageDropped).subscribe(onDrop);
      try {
        const before = droppedMessageCounts();
        const got: Array<{ protocol: string; backend: string; up: boolean }> = [];
        await subscribeMessages(sub, Subjects.health.pattern({ protocol: 'mysql' }), (report, meta) => {
          got.push({ ...meta.params, up: report.up });
        }).ready;
        const subject = Subjects.health.subject.fill({ protocol: 'mysql', backend: 'db1' });
        pub.publish(subject, bytes('{not json'));
        pub.publish(subject, bytes(JSON.stringify({ v: 99, protocol: 'mysql' })));
        pub.publish(subject, bytes(JSON.stringify({ v: 1, protocol: 'mysql', backend: 'db1', up: 'yes' })));
        publishMessage(pub, Subjects.health, { protocol: 'mysql', backend: 'db1' }, {
          protocol: 'mysql',
          backend: 'db1',
          up: true,
          latencyMs: 1.5,
          lagSeconds: null,
          position: '0-1-42',
          roleObserved: 'primary',
          checkedAt: '2024-01-01T00:00:00.000Z',
        });
        await eventually(() => got.length === 1);
        await eventually(() => reports.filter((r) => r.subject === subject).length === 3);
        const after = droppedMessageCounts();
        expect(got).toEqual([{ protocol: 'mysql', backend: 'db1', up: true }]);
        expect(after['malformed-json'] - before['malformed-json']).toBe(1);
        expect(after['unsupported-version'] - before['unsupported-version']).toBe(1);
        expect(after['schema-mismatch'] - before['schema-mismatch']).toBe(1);
        expect(reports.filter((r) => r.subject === subject).map((r) => r.reason)).toEqual(['malformed-json', 'unsupported-version', 'schema-mismatch']);
      } finally {
        channel(Channels.busMessageDropped).unsubscribe(onDrop);
      }
    });

    it('refuses to publish a payload that fails its own schema', async () => {
      const bus = await ctx.open('a');
      expect(() => publishMessage(bus, Subjects.edgeHeartbeat, {}, heartbeat({ sessions: -1 }))).toThrow(
        expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_PAYLOAD' }),
      );
    });

    it('serves typed requests, answering malformed ones with an error reply without calling the handler', async () => {
      const [client, server] = [await ctx.open('client'), await ctx.open('server')];
      let calls = 0;
      await serveMessages(server, Subjects.xaExecute.pattern(), async (req) => {
        calls++;
        return {
          xid: 'xid-1',
          decision: 'commit' as const,
          outcomes: req.participants.map((p) => ({ shard: p.shard, backend: p.backend, outcome: 'committed' as const, affectedRows: 1 })),
        };
      }).ready;
      const reply = await requestMessage(
        client,
        Subjects.xaExecute,
        {},
        { requestedBy: 'edge-1', statement: 'UPDATE t SET a = 1', participants: [{ shard: 's1', backend: 'db1' }], deadlineMs: 1000 },
        { timeoutMs: 2000 },
      );
      expect(reply).toEqual({ xid: 'xid-1', decision: 'commit', outcomes: [{ shard: 's1', backend: 'db1', outcome: 'committed', affectedRows: 1 }] });
      const bad = client.request(Subjects.xaExecute.subject.fill({}), bytes(JSON.stringify({ v: 1, statement: '' })), { timeoutMs: 2000 });
      await expect(bad).rejects.toMatchObject({ code: 'DBP_ERR_BUS_REMOTE' });
      await expect(bad).rejects.toThrow(/DBP_ERR_BUS_MALFORMED_MESSAGE/);
      expect(calls).toBe(1);
    });

    it('keeps typed KV records whose revision is the epoch, and skips malformed values in a watch', async () => {
      const bus = await ctx.open('a');
      const config = await openRecords(bus, { ...KvRecords.config, bucket: `cfg${ctx.prefix}` });
      const seen: number[] = [];
      const epochs = config.watch({}, (record) => void seen.push(record.revision));
      await epochs.ready;
      const value = { config: { proxy: { admin_listen: '127.0.0.1:9000' } }, hash: 'abc', author: 'ops', appliedAt: '2024-01-01T00:00:00.000Z' };
      const epoch1 = await config.put({}, value, { expectedRevision: 0 });
      await config.kv.put('current', bytes('{"v":1,"config":"not an object"}'));
      const epoch3 = await config.put({}, { ...value, hash: 'def' }, { expectedRevision: epoch1 + 1 });
      await eventually(() => seen.length === 2);
      expect(seen).toEqual([epoch1, epoch3]);
      const current = await config.get({});
      expect(current?.revision).toBe(epoch3);
      expect(current?.value?.hash).toBe('def');
    });
  });
}
