// The bus contract: one suite, run against the embedded bus and against NATS, so both behave
// the same for publish/subscribe, wildcards, request/reply, KV and trace context.
import { channel } from 'node:diagnostics_channel';
import { randomUUID } from 'node:crypto';
import { Channels, createError } from '@dbproxy/util';
import {
  droppedMessageCounts,
  openRecords,
  publishMessage,
  requestMessage,
  serveMessages,
  subscribeMessages,
  KvRecords,
  Subjects,
  type Bus,
  type BusMessage,
  type BusMessageDropped,
  type EdgeHeartbeat,
  type KvEntry,
} from '../src/index';
import { activeSpanContext, installTracePropagation, withRemoteSpan } from './trace-setup';

/** Makes a connected bus; every bus made for one test shares one broker or server. */
export type MakeBus = (name: string) => Promise<Bus>;

const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = (s: string): Uint8Array => enc.encode(s);
const text = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : dec.decode(b));

const ContractFailure = createError<[string]>('DBP_ERR_TEST_BUS_CONTRACT_FAILURE', 'contract handler failed: %s');

/** Polls until `check` holds, failing after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function heartbeat(overrides: Partial<EdgeHeartbeat> = {}): EdgeHeartbeat {
  return {
    instanceId: 'edge-1',
    protocol: 'mysql',
    epoch: 3,
    sessions: 12,
    version: '0.1.0',
    adminAddress: '127.0.0.1:9100',
    startedAt: '2024-01-01T00:00:00.000Z',
    sentAt: '2024-01-01T00:00:05.000Z',
    ...overrides,
  };
}

export function runBusContract(name: string, makeBus: MakeBus): void {
  describe(`bus contract: ${name}`, () => {
    const opened: Bus[] = [];
    let prefix = '';
    const open = async (label: string): Promise<Bus> => {
      const bus = await makeBus(label);
      opened.push(bus);
      return bus;
    };

    beforeAll(() => installTracePropagation());
    beforeEach(() => {
      prefix = `t${randomUUID().replace(/-/g, '')}`;
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((b) => b.close()));
    });

    describe('publish/subscribe', () => {
      it('matches * as one token and > as the tail, on the same and on another client', async () => {
        const [pub, sub] = [await open('pub'), await open('sub')];
        const seen: Record<string, string[]> = { star: [], tail: [], exact: [] };
        const subs = [
          sub.subscribe(`${prefix}.health.*`, (m) => void seen.star?.push(m.subject)),
          sub.subscribe(`${prefix}.health.>`, (m) => void seen.tail?.push(m.subject)),
          sub.subscribe(`${prefix}.health.mysql`, (m) => void seen.exact?.push(m.subject)),
        ];
        await Promise.all(subs.map((s) => s.ready));
        for (const s of ['health.mysql', 'health.mysql.db1', 'health', 'other.mysql', 'health.pg']) pub.publish(`${prefix}.${s}`, bytes(s));
        await eventually(() => seen.tail?.length === 3 && seen.star?.length === 2 && seen.exact?.length === 1, 3000, 'deliveries');
        await sleep(50); // nothing else arrives
        expect(seen.star).toEqual([`${prefix}.health.mysql`, `${prefix}.health.pg`]);
        expect(seen.tail).toEqual([`${prefix}.health.mysql`, `${prefix}.health.mysql.db1`, `${prefix}.health.pg`]);
        expect(seen.exact).toEqual([`${prefix}.health.mysql`]);
      });

      it('delivers payload bytes and headers unchanged, in order', async () => {
        const [pub, sub] = [await open('pub'), await open('sub')];
        const got: BusMessage[] = [];
        await sub.subscribe(`${prefix}.data`, (m) => void got.push(m)).ready;
        const payload = new Uint8Array([0, 1, 2, 255]);
        for (let i = 0; i < 20; i++) pub.publish(`${prefix}.data`, i === 0 ? payload : bytes(String(i)), { 'X-Seq': String(i) });
        payload[0] = 9; // the publisher reusing its buffer must not change what was sent
        await eventually(() => got.length === 20);
        expect([...(got[0]?.data ?? [])]).toEqual([0, 1, 2, 255]);
        expect(got.map((m) => m.headers['X-Seq'])).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
      });

      it('stops delivering after unsubscribe', async () => {
        const bus = await open('a');
        let count = 0;
        const s = bus.subscribe(`${prefix}.x`, () => void count++);
        await s.ready;
        bus.publish(`${prefix}.x`, bytes('1'));
        await eventually(() => count === 1);
        s.unsubscribe();
        bus.publish(`${prefix}.x`, bytes('2'));
        await sleep(100);
        expect(count).toBe(1);
      });

      it('keeps a subscription alive when its handler throws or rejects, and counts the failures', async () => {
        const bus = await open('a');
        const before = droppedMessageCounts()['handler-error'];
        const got: string[] = [];
        await bus.subscribe(`${prefix}.x`, async (m) => {
          const body = text(m.data) ?? '';
          if (body === 'throw') throw ContractFailure(body);
          if (body === 'reject') return Promise.reject(ContractFailure(body));
          got.push(body);
        }).ready;
        for (const body of ['throw', 'reject', 'ok']) bus.publish(`${prefix}.x`, bytes(body));
        await eventually(() => got.length === 1);
        await eventually(() => droppedMessageCounts()['handler-error'] === before + 2);
        expect(got).toEqual(['ok']);
      });

      it('rejects invalid subjects, patterns and headers with typed errors', async () => {
        const bus = await open('a');
        expect(() => bus.publish(`${prefix}.*`, bytes('x'))).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));
        expect(() => bus.publish(`${prefix}..x`, bytes('x'))).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));
        expect(() => bus.subscribe(`${prefix}.>.x`, () => undefined)).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));
        expect(() => bus.publish(`${prefix}.x`, bytes('x'), { 'Bad Name': 'v' })).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_HEADER' }));
        expect(() => bus.publish(`${prefix}.x`, bytes('x'), { Good: 'a\r\nb' })).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_HEADER' }));
        expect(() => bus.publish(`${prefix}.x`, new Uint8Array(2 * 1024 * 1024))).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_PAYLOAD_TOO_LARGE' }));
      });

      it('drops publishes after close without throwing, and reports the closed state', async () => {
        const bus = await makeBus('closing');
        const statuses: string[] = [];
        bus.onStatus((s) => statuses.push(s));
        await bus.close();
        const before = droppedMessageCounts()['publish-failed'];
        expect(() => bus.publish(`${prefix}.x`, bytes('late'))).not.toThrow();
        expect(droppedMessageCounts()['publish-failed']).toBe(before + 1);
        expect(bus.status()).toBe('closed');
        expect(statuses).toEqual(['closed']);
        await expect(bus.request(`${prefix}.x`, bytes('q'), { timeoutMs: 100 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_CLOSED' });
      });
    });

    describe('request/reply', () => {
      it('answers a request from another client, with the requester headers visible to the server', async () => {
        const [client, server] = [await open('client'), await open('server')];
        await server.serve(`${prefix}.echo.*`, async (m) => bytes(`${m.subject}:${text(m.data)}:${m.headers['X-Who']}`)).ready;
        const reply = await client.request(`${prefix}.echo.one`, bytes('hi'), { timeoutMs: 2000, headers: { 'X-Who': 'edge' } });
        expect(text(reply.data)).toBe(`${prefix}.echo.one:hi:edge`);
      });

      it('rejects with DBP_ERR_BUS_TIMEOUT at the deadline when the server is too slow', async () => {
        const [client, server] = [await open('client'), await open('server')];
        await server.serve(`${prefix}.slow`, async () => {
          await sleep(500);
          return bytes('late');
        }).ready;
        const started = Date.now();
        await expect(client.request(`${prefix}.slow`, bytes('q'), { timeoutMs: 150 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_TIMEOUT' });
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(140);
        expect(elapsed).toBeLessThan(450);
      });

      it('rejects with DBP_ERR_BUS_NO_RESPONDERS at once when nobody serves the subject', async () => {
        const client = await open('client');
        const started = Date.now();
        await expect(client.request(`${prefix}.nobody`, bytes('q'), { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_NO_RESPONDERS' });
        expect(Date.now() - started).toBeLessThan(1000);
      });

      it('turns a serve handler error into DBP_ERR_BUS_REMOTE and keeps serving', async () => {
        const [client, server] = [await open('client'), await open('server')];
        const before = droppedMessageCounts()['handler-error'];
        await server.serve(`${prefix}.svc`, async (m) => {
          if (text(m.data) === 'fail') throw ContractFailure('line one\nline two');
          return bytes('fine');
        }).ready;
        const failure = client.request(`${prefix}.svc`, bytes('fail'), { timeoutMs: 2000 });
        await expect(failure).rejects.toMatchObject({ code: 'DBP_ERR_BUS_REMOTE' });
        await expect(failure).rejects.toThrow(/DBP_ERR_TEST_BUS_CONTRACT_FAILURE contract handler failed: line one line two/);
        expect(droppedMessageCounts()['handler-error']).toBe(before + 1);
        expect(text((await client.request(`${prefix}.svc`, bytes('ok'), { timeoutMs: 2000 })).data)).toBe('fine');
      });

      it('gives each request to one member of a serve queue group', async () => {
        const [client, s1, s2] = [await open('client'), await open('s1'), await open('s2')];
        const handled: string[] = [];
        const serveAs = (who: string) => async (m: BusMessage) => {
          handled.push(`${who}:${text(m.data)}`);
          return bytes(who);
        };
        await Promise.all([s1.serve(`${prefix}.xa`, serveAs('s1')).ready, s2.serve(`${prefix}.xa`, serveAs('s2')).ready]);
        for (let i = 0; i < 10; i++) await client.request(`${prefix}.xa`, bytes(String(i)), { timeoutMs: 2000 });
        await sleep(50);
        expect(handled).toHaveLength(10);
        expect(new Set(handled.map((h) => h.split(':')[1])).size).toBe(10);
      });
    });

    describe('trace context', () => {
      it('carries the active span context from publish to the subscriber handler', async () => {
        const [pub, sub] = [await open('pub'), await open('sub')];
        let seen: { traceId?: string; spanId?: string; header?: string } | undefined;
        await sub.subscribe(`${prefix}.traced`, (m) => {
          const span = activeSpanContext();
          seen = { traceId: span?.traceId, spanId: span?.spanId, header: m.headers.traceparent };
        }).ready;
        const sent = withRemoteSpan((span) => {
          pub.publish(`${prefix}.traced`, bytes('x'));
          return span;
        });
        await eventually(() => seen !== undefined);
        expect(seen).toEqual({ traceId: sent.traceId, spanId: sent.spanId, header: `00-${sent.traceId}-${sent.spanId}-01` });
      });

      it('carries it from request to the serve handler', async () => {
        const [client, server] = [await open('client'), await open('server')];
        await server.serve(`${prefix}.traced`, async () => bytes(activeSpanContext()?.traceId ?? 'none')).ready;
        const { span, reply } = await withRemoteSpan(async (span) => ({ span, reply: await client.request(`${prefix}.traced`, bytes('q'), { timeoutMs: 2000 }) }));
        expect(text(reply.data)).toBe(span.traceId);
      });

      it('runs handlers of untraced messages outside any span', async () => {
        const bus = await open('a');
        let traced: boolean | undefined;
        await bus.subscribe(`${prefix}.plain`, () => void (traced = activeSpanContext() !== undefined)).ready;
        bus.publish(`${prefix}.plain`, bytes('x'));
        await eventually(() => traced !== undefined);
        expect(traced).toBe(false);
      });
    });

    describe('kv', () => {
      const bucketName = (): string => `b${prefix}`;

      it('puts and gets values with one increasing revision per bucket', async () => {
        const kv = await (await open('a')).kv(bucketName());
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
        const kv = await (await open('a')).kv(bucketName());
        const created = await kv.put('current', bytes('v1'), { expectedRevision: 0 });
        await expect(kv.put('current', bytes('dup'), { expectedRevision: 0 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_KV_REVISION_MISMATCH' });
        const updated = await kv.put('current', bytes('v2'), { expectedRevision: created });
        await expect(kv.put('current', bytes('stale'), { expectedRevision: created })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_KV_REVISION_MISMATCH' });
        await expect(kv.put('absent', bytes('x'), { expectedRevision: 7 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_KV_REVISION_MISMATCH' });
        expect(updated).toBeGreaterThan(created);
        expect(text((await kv.get('current'))?.value)).toBe('v2');
      });

      it('deletes keys, lists live keys by pattern, and recreates a deleted key with expectedRevision 0', async () => {
        const kv = await (await open('a')).kv(bucketName());
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
        const [writer, reader] = [await open('writer'), await open('reader')];
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
        const kv = await (await open('a')).kv(bucketName());
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
        const [pub, sub] = [await open('pub'), await open('sub')];
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
        const bus = await open('a');
        expect(() => publishMessage(bus, Subjects.edgeHeartbeat, {}, heartbeat({ sessions: -1 }))).toThrow(
          expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_PAYLOAD' }),
        );
      });

      it('serves typed requests, answering malformed ones with an error reply without calling the handler', async () => {
        const [client, server] = [await open('client'), await open('server')];
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
        const bus = await open('a');
        const config = await openRecords(bus, { ...KvRecords.config, bucket: `cfg${prefix}` });
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
  });
}
