// The pool's one maintenance timer: idle timeout, maximum lifetime, dead idle connections, minIdle.
import { fakePool, type FakeConnection } from './testing';
import { closePoolsAfterEach, settle } from './testing/tracked-pools';
import type { BackendPool } from './backend-pool';

const track = closePoolsAfterEach();

/** Borrows `n` connections at once and gives them back in order, so the last one ends on top. */
async function warm(pool: BackendPool<FakeConnection>, n: number): Promise<void> {
  const leases = await Promise.all(Array.from({ length: n }, () => pool.acquire()));
  for (const lease of leases) {
    pool.release(lease, { reusable: true });
    await settle();
  }
}

describe('idle timeout', () => {
  it('closes connections idle longer than idleTimeoutMs, the longest idle first, and keeps the busy ones', async () => {
    const { pool, factory } = track(fakePool({ max: 3, idleTimeoutMs: 1_000, sweepIntervalMs: 100 }));
    await warm(pool, 3);
    // Keep using the top connection every 300 ms: LIFO keeps handing out the same one.
    for (let t = 0; t < 1_500; t += 300) {
      const lease = pool.tryAcquire();
      expect(lease?.connection.serial).toBe(3);
      if (lease) pool.release(lease, { reusable: true });
      await jest.advanceTimersByTimeAsync(300);
    }
    expect(factory.destroyReasons()).toEqual(['idle-timeout', 'idle-timeout']);
    expect(factory.created.filter((c) => c.alive).map((c) => c.serial)).toEqual([3]);
    expect(pool.stats()).toMatchObject({ idle: 1, total: 1, destroys: { 'idle-timeout': 2 } });
  });

  it('keeps minIdle connections however long they are idle', async () => {
    const { pool } = track(fakePool({ max: 3, minIdle: 1, idleTimeoutMs: 1_000, sweepIntervalMs: 100 }));
    await warm(pool, 3);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(pool.stats()).toMatchObject({ idle: 1, total: 1 });
  });

  it('with idleTimeoutMs 0 never closes idle connections', async () => {
    const { pool } = track(fakePool({ max: 2, idleTimeoutMs: 0, sweepIntervalMs: 100 }));
    await warm(pool, 2);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(pool.stats().idle).toBe(2);
  });
});

describe('maximum lifetime', () => {
  it('closes a connection on release once it is older than maxLifetimeMs', async () => {
    const { pool, factory } = track(fakePool({ max: 1, maxLifetimeMs: 1_000, sweepIntervalMs: 100 }));
    const lease = await pool.acquire();
    await jest.advanceTimersByTimeAsync(1_000);
    pool.release(lease, { reusable: true });
    expect(factory.destroyReasons()).toEqual(['max-lifetime']);
    expect(lease.pool.stats().total).toBe(0);
  });

  it('closes idle connections past their lifetime on the sweep and never lends one', async () => {
    const { pool, factory } = track(fakePool({ max: 2, maxLifetimeMs: 1_000, sweepIntervalMs: 400 }));
    await warm(pool, 2);
    await jest.advanceTimersByTimeAsync(999);
    expect(pool.stats().idle).toBe(2);
    await jest.advanceTimersByTimeAsync(201); // sweep at 1200
    expect(factory.destroyReasons()).toEqual(['max-lifetime', 'max-lifetime']);
  });

  it('reads ages from a clock cached between sweeps and connection opens, not per query', async () => {
    const { pool, factory } = track(fakePool({ max: 2, maxLifetimeMs: 1_000, sweepIntervalMs: 60_000 }));
    await warm(pool, 1);
    await jest.advanceTimersByTimeAsync(1_000);
    // No sweep yet: the cached time still says the idle connection is new, so it is lent.
    const old = await pool.acquire();
    expect(old.connection.serial).toBe(1);
    // Opening a second connection reads the clock; the old one is then past its lifetime on release.
    const fresh = await pool.acquire();
    expect(fresh.connection.serial).toBe(2);
    pool.release(old, { reusable: true });
    expect(factory.destroyReasons()).toEqual(['max-lifetime']);
    pool.release(fresh, { reusable: true });
  });
});

describe('dead idle connections and minIdle', () => {
  it('opens minIdle warm connections at start, and replaces closed ones on the next sweep', async () => {
    const { pool, factory } = track(fakePool({ max: 4, minIdle: 2, sweepIntervalMs: 100 }));
    await settle();
    expect(pool.stats()).toMatchObject({ idle: 2, total: 2 });
    factory.created[0].alive = false; // killed server-side while idle
    await jest.advanceTimersByTimeAsync(100);
    expect(factory.destroyReasons()).toEqual(['dead']);
    await settle();
    expect(pool.stats()).toMatchObject({ idle: 2, total: 2, creates: 3 });
  });

  it('retries failed warm-up creates on later sweeps without any waiter being hurt', async () => {
    const { pool, factory } = track(fakePool({ max: 2, minIdle: 1, sweepIntervalMs: 100 }));
    factory.failCreates = 2;
    await settle();
    expect(pool.stats()).toMatchObject({ idle: 0, createFailures: 1 });
    await jest.advanceTimersByTimeAsync(200);
    expect(pool.stats()).toMatchObject({ idle: 1, createFailures: 2, creates: 1 });
  });
});
