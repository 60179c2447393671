// Reserved capacity, pressure figures, stats and live reconfiguration of sizes.
import { fakePool } from './testing';
import { closePoolsAfterEach, settle } from './testing/tracked-pools';

const track = closePoolsAfterEach();
const quiet = (p: Promise<unknown>) => p.catch(() => undefined);

describe('reserved capacity', () => {
  it('lets a BEGIN through while ordinary work has used every normal connection', async () => {
    const { pool, factory } = track(fakePool({ max: 2, reserved: 1 }));
    await Promise.all([pool.acquire(), pool.acquire()]);
    const ordinary = pool.acquire();
    const tx = await pool.acquire({ reserved: true });
    expect(tx.reserved).toBe(true);
    expect(pool.stats()).toMatchObject({ inUse: 3, reservedInUse: 1, waiters: 1, capacity: 3, total: 3 });
    expect(factory.peakOpen).toBe(3);
    quiet(ordinary);
  });

  it('never lends the reserve to ordinary acquirers, even when a connection is idle', async () => {
    const { pool } = track(fakePool({ max: 1, reserved: 1, acquireTimeoutMs: 100 }));
    const ordinary = await pool.acquire();
    const tx = await pool.acquire({ reserved: true });
    pool.release(tx, { reusable: true });
    await settle();
    expect(pool.stats()).toMatchObject({ idle: 1, inUse: 1 });
    expect(pool.tryAcquire()).toBeUndefined();
    const waiting = expect(pool.acquire()).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_TIMEOUT' });
    await jest.advanceTimersByTimeAsync(100);
    await waiting;
    // The idle connection was the reserved one; a reserved acquirer still gets it at once.
    expect(pool.tryAcquire({ reserved: true })?.reserved).toBe(true);
    pool.release(ordinary, { reusable: true });
  });

  it('lets reserved acquirers use a free normal slot when the reserve is full', async () => {
    const { pool } = track(fakePool({ max: 2, reserved: 1 }));
    const first = await pool.acquire({ reserved: true });
    const second = await pool.acquire({ reserved: true });
    expect([first.reserved, second.reserved]).toEqual([true, false]);
    expect(pool.stats()).toMatchObject({ inUse: 2, reservedInUse: 1 });
  });

  it('queues reserved acquirers apart, so they do not wait behind ordinary ones', async () => {
    const { pool } = track(fakePool({ max: 1, reserved: 1 }));
    const tx1 = await pool.acquire({ reserved: true });
    const normal = await pool.acquire();
    const ordinaryWaiter = pool.acquire();
    const reservedWaiter = pool.acquire({ reserved: true });
    pool.release(tx1, { reusable: true });
    await settle();
    const tx2 = await reservedWaiter;
    expect(tx2.reserved).toBe(true);
    expect(pool.stats().waiters).toBe(1);
    pool.release(normal, { reusable: true });
    await settle();
    expect((await ordinaryWaiter).reserved).toBe(false);
  });

  it('uses the normal pool for reserved acquirers when no reserve is configured', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire({ reserved: true });
    expect(lease.reserved).toBe(false);
    expect(pool.stats()).toMatchObject({ inUse: 1, reservedInUse: 0, capacity: 1 });
    const waiting = pool.acquire({ reserved: true });
    pool.release(lease, { reusable: true });
    await settle();
    expect((await waiting).connectionId).toBe(lease.connectionId);
  });
});

describe('pressure and stats', () => {
  it('is (inUse + waiters) / capacity', async () => {
    const { pool } = track(fakePool({ max: 3, reserved: 1 }));
    expect(pool.pressure()).toBe(0);
    const leases = await Promise.all([pool.acquire(), pool.acquire()]);
    expect(pool.pressure()).toBe(0.5);
    await pool.acquire();
    const waiters = [pool.acquire(), pool.acquire(), pool.acquire()];
    await settle();
    expect(pool.stats()).toMatchObject({ inUse: 3, waiters: 3, pressure: 6 / 4 });
    expect(pool.pressure()).toBe(1.5);
    waiters.forEach(quiet);
    pool.release(leases[0], { reusable: true });
    await settle();
    expect(pool.pressure()).toBe(5 / 4);
  });

  it('counts checkouts, creates, timeouts and destroys by reason', async () => {
    const { pool, factory } = track(fakePool({ max: 1, acquireTimeoutMs: 10 }));
    const lease = await pool.acquire();
    const late = expect(pool.acquire()).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_TIMEOUT' });
    await jest.advanceTimersByTimeAsync(10);
    await late;
    pool.release(lease, { reusable: false, reason: 'cancelled' });
    factory.failCreates = 1;
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'DBP_ERR_POOL_CREATE_FAILED' });
    pool.release(await pool.acquire(), { reusable: true });
    await settle();
    expect(pool.stats()).toEqual({
      backend: 'fake-primary',
      max: 1,
      reserved: 0,
      capacity: 1,
      total: 1,
      idle: 1,
      inUse: 0,
      reservedInUse: 0,
      resetting: 0,
      waiters: 0,
      pendingCreates: 0,
      pendingDestroys: 0,
      pressure: 0,
      checkouts: 2,
      acquireTimeouts: 1,
      acquireAborts: 0,
      waitersRejected: 0,
      resetFailures: 0,
      creates: 2,
      createFailures: 1,
      resets: 1,
      waitMs: expect.objectContaining({ p50: expect.any(Number) }),
      destroys: { cancelled: 1 },
    });
  });
});

describe('configure', () => {
  it('growing serves waiters at once', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    await pool.acquire();
    const waiting = pool.acquire();
    pool.configure({ max: 2 });
    expect((await waiting).connection.serial).toBe(2);
  });

  it('shrinking closes surplus idle connections now and surplus lent ones on release', async () => {
    const { pool, factory } = track(fakePool({ max: 4 }));
    const leases = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire(), pool.acquire()]);
    pool.release(leases[0], { reusable: true });
    pool.release(leases[1], { reusable: true });
    await settle();
    pool.configure({ max: 1 });
    expect(factory.destroyReasons()).toEqual(['surplus', 'surplus']);
    expect(pool.stats()).toMatchObject({ total: 2, idle: 0, inUse: 2, max: 1 });
    pool.release(leases[2], { reusable: true });
    expect(factory.destroyReasons()).toEqual(['surplus', 'surplus', 'surplus']);
    pool.release(leases[3], { reusable: true });
    await settle();
    expect(factory.destroyed).toHaveLength(3);
    expect(pool.stats()).toMatchObject({ total: 1, idle: 1 });
  });

  it('rejects invalid sizes with DBP_ERR_POOL_INVALID_OPTIONS and keeps the old ones', () => {
    const { pool } = track(fakePool({ max: 2 }));
    expect(() => pool.configure({ max: 0 })).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_INVALID_OPTIONS' }));
    expect(() => pool.configure({ max: 2, minIdle: 3 })).toThrow(/minIdle/);
    expect(() => pool.configure({ max: 2, acquireTimeoutMs: -1 })).toThrow(/acquireTimeoutMs/);
    expect(() => pool.configure({ max: 1.5 })).toThrow(/max/);
    expect(pool.options.max).toBe(2);
  });
});
