// Bus contract, messaging half: publish/subscribe with wildcards, request/reply, trace context.
import { droppedMessageCounts, type BusMessage } from '../src/index';
import { bytes, ContractFailure, eventually, sleep, text, type ContractContext } from './contract-support';
import { activeSpanContext, withRemoteSpan } from './trace-setup';

export function messagingContract(ctx: ContractContext): void {
  describe('publish/subscribe', () => {
    it('matches * as one token and > as the tail, on the same and on another client', async () => {
      const [pub, sub] = [await ctx.open('pub'), await ctx.open('sub')];
      const seen: Record<string, string[]> = { star: [], tail: [], exact: [] };
      const subs = [
        sub.subscribe(`${ctx.prefix}.health.*`, (m) => void seen.star?.push(m.subject)),
        sub.subscribe(`${ctx.prefix}.health.>`, (m) => void seen.tail?.push(m.subject)),
        sub.subscribe(`${ctx.prefix}.health.mysql`, (m) => void seen.exact?.push(m.subject)),
      ];
      await Promise.all(subs.map((s) => s.ready));
      for (const s of ['health.mysql', 'health.mysql.db1', 'health', 'other.mysql', 'health.pg']) pub.publish(`${ctx.prefix}.${s}`, bytes(s));
      await eventually(() => seen.tail?.length === 3 && seen.star?.length === 2 && seen.exact?.length === 1, 3000, 'deliveries');
      await sleep(50); // nothing else arrives
      expect(seen.star).toEqual([`${ctx.prefix}.health.mysql`, `${ctx.prefix}.health.pg`]);
      expect(seen.tail).toEqual([`${ctx.prefix}.health.mysql`, `${ctx.prefix}.health.mysql.db1`, `${ctx.prefix}.health.pg`]);
      expect(seen.exact).toEqual([`${ctx.prefix}.health.mysql`]);
    });

    it('delivers payload bytes and headers unchanged, in order', async () => {
      const [pub, sub] = [await ctx.open('pub'), await ctx.open('sub')];
      const got: BusMessage[] = [];
      await sub.subscribe(`${ctx.prefix}.data`, (m) => void got.push(m)).ready;
      const payload = new Uint8Array([0, 1, 2, 255]);
      for (let i = 0; i < 20; i++) pub.publish(`${ctx.prefix}.data`, i === 0 ? payload : bytes(String(i)), { 'X-Seq': String(i) });
      payload[0] = 9; // the publisher reusing its buffer must not change what was sent
      await eventually(() => got.length === 20);
      expect([...(got[0]?.data ?? [])]).toEqual([0, 1, 2, 255]);
      expect(got.map((m) => m.headers['X-Seq'])).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    });

    it('stops delivering after unsubscribe', async () => {
      const bus = await ctx.open('a');
      let count = 0;
      const s = bus.subscribe(`${ctx.prefix}.x`, () => void count++);
      await s.ready;
      bus.publish(`${ctx.prefix}.x`, bytes('1'));
      await eventually(() => count === 1);
      s.unsubscribe();
      bus.publish(`${ctx.prefix}.x`, bytes('2'));
      await sleep(100);
      expect(count).toBe(1);
    });

    it('keeps a subscription alive when its handler throws or rejects, and counts the failures', async () => {
      const bus = await ctx.open('a');
      const before = droppedMessageCounts()['handler-error'];
      const got: string[] = [];
      await bus.subscribe(`${ctx.prefix}.x`, async (m) => {
        const body = text(m.data) ?? '';
        if (body === 'throw') throw ContractFailure(body);
        if (body === 'reject') return Promise.reject(ContractFailure(body));
        got.push(body);
      }).ready;
      for (const body of ['throw', 'reject', 'ok']) bus.publish(`${ctx.prefix}.x`, bytes(body));
      await eventually(() => got.length === 1);
      await eventually(() => droppedMessageCounts()['handler-error'] === before + 2);
      expect(got).toEqual(['ok']);
    });

    it('rejects invalid subjects, patterns and headers with typed errors', async () => {
      const bus = await ctx.open('a');
      expect(() => bus.publish(`${ctx.prefix}.*`, bytes('x'))).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));
      expect(() => bus.publish(`${ctx.prefix}..x`, bytes('x'))).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));
      expect(() => bus.subscribe(`${ctx.prefix}.>.x`, () => undefined)).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));
      expect(() => bus.publish(`${ctx.prefix}.x`, bytes('x'), { 'Bad Name': 'v' })).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_HEADER' }));
      expect(() => bus.publish(`${ctx.prefix}.x`, bytes('x'), { Good: 'a\r\nb' })).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_HEADER' }));
      expect(() => bus.publish(`${ctx.prefix}.x`, new Uint8Array(2 * 1024 * 1024))).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_PAYLOAD_TOO_LARGE' }));
      // request reports the same caller errors as a rejection, on both buses.
      await expect(bus.request(`${ctx.prefix}.*`, bytes('q'), { timeoutMs: 100 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' });
    });

    it('drops publishes after close without throwing, and reports the closed state', async () => {
      const bus = await ctx.makeBus('closing');
      const statuses: string[] = [];
      bus.onStatus((s) => statuses.push(s));
      await bus.close();
      const before = droppedMessageCounts()['publish-failed'];
      expect(() => bus.publish(`${ctx.prefix}.x`, bytes('late'))).not.toThrow();
      expect(droppedMessageCounts()['publish-failed']).toBe(before + 1);
      expect(bus.status()).toBe('closed');
      expect(statuses).toEqual(['closed']);
      await expect(bus.request(`${ctx.prefix}.x`, bytes('q'), { timeoutMs: 100 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_CLOSED' });
    });
  });

  describe('request/reply', () => {
    it('answers a request from another client, with the requester headers visible to the server', async () => {
      const [client, server] = [await ctx.open('client'), await ctx.open('server')];
      await server.serve(`${ctx.prefix}.echo.*`, async (m) => bytes(`${m.subject}:${text(m.data)}:${m.headers['X-Who']}`)).ready;
      const reply = await client.request(`${ctx.prefix}.echo.one`, bytes('hi'), { timeoutMs: 2000, headers: { 'X-Who': 'edge' } });
      expect(text(reply.data)).toBe(`${ctx.prefix}.echo.one:hi:edge`);
    });

    it('rejects with DBP_ERR_BUS_TIMEOUT at the deadline when the server is too slow', async () => {
      const [client, server] = [await ctx.open('client'), await ctx.open('server')];
      await server.serve(`${ctx.prefix}.slow`, async () => {
        await sleep(500);
        return bytes('late');
      }).ready;
      const started = Date.now();
      await expect(client.request(`${ctx.prefix}.slow`, bytes('q'), { timeoutMs: 150 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_TIMEOUT' });
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(140);
      expect(elapsed).toBeLessThan(450);
    });

    it('rejects with DBP_ERR_BUS_NO_RESPONDERS at once when nobody serves the subject', async () => {
      const client = await ctx.open('client');
      const started = Date.now();
      await expect(client.request(`${ctx.prefix}.nobody`, bytes('q'), { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_NO_RESPONDERS' });
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it('turns a serve handler error into DBP_ERR_BUS_REMOTE and keeps serving', async () => {
      const [client, server] = [await ctx.open('client'), await ctx.open('server')];
      const before = droppedMessageCounts()['handler-error'];
      await server.serve(`${ctx.prefix}.svc`, async (m) => {
        if (text(m.data) === 'fail') throw ContractFailure('line one\nline two');
        return bytes('fine');
      }).ready;
      const failure = client.request(`${ctx.prefix}.svc`, bytes('fail'), { timeoutMs: 2000 });
      await expect(failure).rejects.toMatchObject({ code: 'DBP_ERR_BUS_REMOTE' });
      await expect(failure).rejects.toThrow(/DBP_ERR_TEST_BUS_CONTRACT_FAILURE contract handler failed: line one line two/);
      expect(droppedMessageCounts()['handler-error']).toBe(before + 1);
      expect(text((await client.request(`${ctx.prefix}.svc`, bytes('ok'), { timeoutMs: 2000 })).data)).toBe('fine');
    });

    it('gives each request to one member of a serve queue group', async () => {
      const [client, s1, s2] = [await ctx.open('client'), await ctx.open('s1'), await ctx.open('s2')];
      const handled: string[] = [];
      const serveAs = (who: string) => async (m: BusMessage) => {
        handled.push(`${who}:${text(m.data)}`);
        return bytes(who);
      };
      await Promise.all([s1.serve(`${ctx.prefix}.xa`, serveAs('s1')).ready, s2.serve(`${ctx.prefix}.xa`, serveAs('s2')).ready]);
      for (let i = 0; i < 10; i++) await client.request(`${ctx.prefix}.xa`, bytes(String(i)), { timeoutMs: 2000 });
      await sleep(50);
      expect(handled).toHaveLength(10);
      expect(new Set(handled.map((h) => h.split(':')[1])).size).toBe(10);
    });
  });

  describe('trace context', () => {
    it('carries the active span context from publish to the subscriber handler', async () => {
      const [pub, sub] = [await ctx.open('pub'), await ctx.open('sub')];
      let seen: { traceId?: string; spanId?: string; header?: string } | undefined;
      await sub.subscribe(`${ctx.prefix}.traced`, (m) => {
        const span = activeSpanContext();
        seen = { traceId: span?.traceId, spanId: span?.spanId, header: m.headers.traceparent };
      }).ready;
      const sent = withRemoteSpan((span) => {
        pub.publish(`${ctx.prefix}.traced`, bytes('x'));
        return span;
      });
      await eventually(() => seen !== undefined);
      expect(seen).toEqual({ traceId: sent.traceId, spanId: sent.spanId, header: `00-${sent.traceId}-${sent.spanId}-01` });
    });

    it('carries it from request to the serve handler', async () => {
      const [client, server] = [await ctx.open('client'), await ctx.open('server')];
      await server.serve(`${ctx.prefix}.traced`, async () => bytes(activeSpanContext()?.traceId ?? 'none')).ready;
      const { span, reply } = await withRemoteSpan(async (span) => ({ span, reply: await client.request(`${ctx.prefix}.traced`, bytes('q'), { timeoutMs: 2000 }) }));
      expect(text(reply.data)).toBe(span.traceId);
    });

    it('runs handlers of untraced messages outside any span', async () => {
      const bus = await ctx.open('a');
      let traced: boolean | undefined;
      await bus.subscribe(`${ctx.prefix}.plain`, () => void (traced = activeSpanContext() !== undefined)).ready;
      bus.publish(`${ctx.prefix}.plain`, bytes('x'));
      await eventually(() => traced !== undefined);
      expect(traced).toBe(false);
    });
  });
}
