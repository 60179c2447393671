// Property test: random interleavings of acquires, releases, aborts, retires, failures and time
// never break the pool's bounds or lend one connection twice.
import fc from 'fast-check';
import { fakePool } from './testing';
import type { Lease } from './types';
import type { FakeConnection } from './testing';

type Op =
  | { kind: 'acquire'; reserved: boolean; abortable: boolean }
  | { kind: 'release'; index: number; reusable: boolean }
  | { kind: 'abort'; index: number }
  | { kind: 'retire' }
  | { kind: 'kill-idle' }
  | { kind: 'fail-create' }
  | { kind: 'fail-reset' }
  | { kind: 'time'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('acquire' as const), reserved: fc.boolean(), abortable: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('release' as const), index: fc.nat(), reusable: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('abort' as const), index: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'retire' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'kill-idle' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'fail-create' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'fail-reset' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 1, max: 400 }) }) },
);

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('keeps every bound and lends each connection to one borrower at a time', async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 2 }), fc.array(op, { minLength: 20, maxLength: 80 }), async (max, reserved, ops) => {
      const { pool, factory } = fakePool(
        { max, reserved, maxWaiters: 4, acquireTimeoutMs: 300, idleTimeoutMs: 500, maxLifetimeMs: 900, sweepIntervalMs: 100 },
        { createDelayMs: 20, resetDelayMs: 5 },
      );
      const held: Lease<FakeConnection>[] = [];
      /** What went wrong inside acquire callbacks, asserted after each step. */
      const problems: string[] = [];
      const pending: { settled: boolean; abort: AbortController }[] = [];
      const capacity = max + reserved;
      const check = () => {
        const s = pool.stats();
        expect(factory.open).toBeLessThanOrEqual(capacity);
        expect(s.total + s.pendingCreates).toBeLessThanOrEqual(capacity);
        expect(s.total).toBe(s.idle + s.inUse);
        expect(s.total).toBe(factory.open);
        expect(s.reservedInUse).toBeLessThanOrEqual(reserved);
        expect(s.inUse - s.reservedInUse).toBeLessThanOrEqual(max);
        expect(s.waiters).toBeLessThanOrEqual(4);
        expect(problems).toEqual([]);
        const ids = held.map((l) => l.connectionId);
        expect(new Set(ids).size).toBe(ids.length);
        for (const lease of held) expect(lease.connection.destroyedWith).toBeUndefined();
      };
      for (const step of ops) {
        switch (step.kind) {
          case 'acquire': {
            const entry = { settled: false, abort: new AbortController() };
            pending.push(entry);
            pool
              .acquire({ reserved: step.reserved, signal: step.abortable ? entry.abort.signal : undefined })
              .then(
                (lease) => {
                  if (!lease.connection.alive) problems.push(`lent dead connection ${lease.connectionId}`);
                  held.push(lease);
                },
                (err: { code?: string }) => {
                  if (!/^DBP_ERR_POOL_/.test(String(err.code))) problems.push(`untyped rejection ${String(err)}`);
                },
              )
              .finally(() => (entry.settled = true));
            break;
          }
          case 'release':
            if (held.length > 0) pool.release(held.splice(step.index % held.length, 1)[0], { reusable: step.reusable });
            break;
          case 'abort':
            if (pending.length > 0) pending[step.index % pending.length].abort.abort();
            break;
          case 'retire':
            pool.retire('test');
            break;
          case 'kill-idle':
            for (const c of factory.created) if (!c.destroyedWith && held.every((l) => l.connection !== c)) c.alive = false;
            break;
          case 'fail-create':
            factory.failCreates++;
            break;
          case 'fail-reset':
            factory.failResets++;
            break;
          case 'time':
            await jest.advanceTimersByTimeAsync(step.ms);
            break;
        }
        await jest.advanceTimersByTimeAsync(0);
        check();
      }
      for (const lease of held.splice(0)) pool.release(lease, { reusable: true });
      await jest.advanceTimersByTimeAsync(1_000);
      expect(pending.every((p) => p.settled)).toBe(true);
      expect(problems).toEqual([]);
      // Late grants after the release loop go back too.
      for (const lease of held.splice(0)) pool.release(lease, { reusable: true });
      await pool.close();
      expect(factory.open).toBe(0);
      expect(pool.stats()).toMatchObject({ total: 0, waiters: 0, pendingCreates: 0 });
    }),
    { numRuns: 60 },
  );
}, 60_000);
