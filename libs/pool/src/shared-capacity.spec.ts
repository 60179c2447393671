// SharedCapacity: pools of one backend whose connections are not interchangeable stay under one
// bound together; a pool that needs a connection at the bound takes the room of a sibling's idle one.
import { BackendPool } from './backend-pool';
import { SharedCapacity } from './shared-capacity';
import { FakeConnectionFactory, type FakeConnection } from './testing';
import { closePoolsAfterEach, settle } from './testing/tracked-pools';

const track = closePoolsAfterEach();

/** Two pools (each allowed `max` on its own) sharing `limit`, on one factory so that its peakOpen counts both. */
function siblings(limit: number, max = limit, destroyDelayMs?: number) {
  const factory = new FakeConnectionFactory();
  if (destroyDelayMs !== undefined) {
    const destroy = factory.destroy.bind(factory);
    factory.destroy = (connection: FakeConnection, reason: string) => new Promise<void>((resolve) => setTimeout(() => resolve(destroy(connection, reason)), destroyDelayMs)) as unknown as void;
  }
  const shared = new SharedCapacity(limit, 'fake-primary');
  const make = () => track({ pool: new BackendPool<FakeConnection>({ backend: 'fake-primary', max, factory, shared, acquireTimeoutMs: 1_000 }) }).pool;
  return { factory, shared, a: make(), b: make() };
}

describe('SharedCapacity', () => {
  it('keeps sibling pools under one bound: a waiter of one is served from an idle connection of the other', async () => {
    const { factory, shared, a, b } = siblings(2);
    const [a1, a2] = await Promise.all([a.acquire(), a.acquire()]);
    const waiting = b.acquire();
    await settle();
    expect(shared.footprint).toBe(2);
    expect(b.stats()).toMatchObject({ waiters: 1, total: 0 });
    a.release(a1, { reusable: true });
    await settle();
    const b1 = await waiting;
    expect(b1.pool).toBe(b);
    expect(factory.destroyReasons()).toEqual(['shared-capacity']);
    expect(factory.peakOpen).toBe(2);
    expect(a.stats()).toMatchObject({ total: 1, inUse: 1 });
    a.release(a2, { reusable: true });
    b.release(b1, { reusable: true });
  });

  it('times a waiter out rather than exceed the bound while every connection is lent', async () => {
    const { factory, a, b } = siblings(2);
    await Promise.all([a.acquire(), a.acquire()]);
    const waiting = expect(b.acquire()).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_TIMEOUT' });
    await jest.advanceTimersByTimeAsync(1_000);
    await waiting;
    expect(factory.createCalls).toBe(2);
    expect(factory.peakOpen).toBe(2);
  });

  it('opens for a sibling only once a slow close has finished, closing no more idle connections than needed', async () => {
    const { factory, shared, a, b } = siblings(3, 3, 50);
    const leases = await Promise.all([a.acquire(), a.acquire(), a.acquire()]);
    for (const lease of leases) a.release(lease, { reusable: true });
    await settle();
    expect(a.stats().idle).toBe(3);
    const waiting = b.acquire();
    await settle();
    expect(shared.footprint).toBe(3); // one of A's is closing: it still counts
    expect(b.stats().total).toBe(0);
    await jest.advanceTimersByTimeAsync(50);
    await waiting;
    expect(factory.destroyed).toHaveLength(1);
    expect(a.stats().idle).toBe(2);
    expect(factory.peakOpen).toBe(3);
    // slow destroys run on the fake clock: close here while it advances
    const closed = Promise.all([a.close(), b.close()]);
    await jest.advanceTimersByTimeAsync(100);
    await closed;
  });

  it('serves waiters at once when the bound is raised, and closes what is over a lowered bound as it comes back', async () => {
    const { shared, a, b } = siblings(1, 2);
    const a1 = await a.acquire();
    const waiting = b.acquire();
    await settle();
    shared.limit = 2;
    await settle();
    const b1 = await waiting;
    shared.limit = 1;
    b.release(b1, { reusable: true });
    await settle();
    expect(shared.footprint).toBe(1);
    a.release(a1, { reusable: true });
    await settle();
    expect(a.stats().idle).toBe(1);
    expect(() => (shared.limit = 0)).toThrow(/>= 1/);
  });

  it('frees the room of a pool that closed', async () => {
    const { shared, a, b } = siblings(2);
    await a.acquire();
    await b.acquire();
    await a.close();
    await settle();
    expect(shared.footprint).toBe(1);
    expect(await b.acquire()).toBeDefined();
  });

  it('wakes a sibling\'s waiter when a create fails or a new connection goes idle unclaimed (before the pools\' sweep)', async () => {
    const { factory, a, b } = siblings(1);
    factory.failCreates = 1;
    await expect(a.acquire()).rejects.toThrow();
    const first = b.acquire({ timeoutMs: 200 });
    await settle();
    expect((await first).pool).toBe(b);
    b.release(await first, { reusable: true });
    await settle();
    // A's waiter gives up while A's create is in flight; the connection then goes idle in A
    const slow = new FakeConnectionFactory({ createDelayMs: 100 });
    const shared = new SharedCapacity(1, 'fake-primary');
    const c = track({ pool: new BackendPool<FakeConnection>({ backend: 'fake-primary', max: 1, factory: slow, shared }) }).pool;
    const d = track({ pool: new BackendPool<FakeConnection>({ backend: 'fake-primary', max: 1, factory: slow, shared }) }).pool;
    const gaveUp = expect(c.acquire({ timeoutMs: 10 })).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_TIMEOUT' });
    await jest.advanceTimersByTimeAsync(10);
    await gaveUp;
    const waiting = d.acquire({ timeoutMs: 400 });
    await jest.advanceTimersByTimeAsync(250); // C's connection arrives at 100 ms and must be handed over, not kept idle
    expect((await waiting).pool).toBe(d);
  });

  it('closes idle connections over a lowered bound at once', async () => {
    const { shared, a } = siblings(2);
    const leases = await Promise.all([a.acquire(), a.acquire()]);
    for (const lease of leases) a.release(lease, { reusable: true });
    await settle();
    expect(a.stats().idle).toBe(2);
    shared.limit = 1;
    await settle();
    expect(shared.footprint).toBe(1);
    expect(a.stats().destroys).toEqual({ surplus: 1 });
  });
});

