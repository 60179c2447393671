// Acquire, release, waiters, deadlines and aborts of one backend pool, on fake connections.
import { fakePool } from './testing';
import { closePoolsAfterEach, settle } from './testing/tracked-pools';

const track = closePoolsAfterEach();

describe('acquire and release', () => {
  it('creates on demand, resets on release and lends the same connection again', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }));
    const lease = await pool.acquire();
    expect(lease.backend).toBe('fake-primary');
    expect(lease.pool).toBe(pool);
    expect(lease.reserved).toBe(false);
    expect(lease.connection.serial).toBe(1);
    lease.connection.session.set('@x', '1');
    pool.release(lease, { reusable: true });
    expect(pool.stats()).toMatchObject({ inUse: 1, resetting: 1, idle: 0 });
    await settle();
    expect(pool.stats()).toMatchObject({ inUse: 0, resetting: 0, idle: 1, total: 1 });
    const again = pool.tryAcquire();
    expect(again?.connection.serial).toBe(1);
    expect(again?.connection.session.size).toBe(0);
    expect(again?.connection.resets).toBe(1);
    expect(again?.waitMs).toBe(0);
    expect(factory.createCalls).toBe(1);
    expect(pool.stats().checkouts).toBe(2);
  });

  it('lends the most recently released connection first (LIFO keeps few connections warm)', async () => {
    const { pool } = track(fakePool({ max: 3 }));
    const [a, b, c] = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    pool.release(a, { reusable: true });
    await settle();
    pool.release(c, { reusable: true });
    await settle();
    pool.release(b, { reusable: true });
    await settle();
    const order = [pool.tryAcquire(), pool.tryAcquire(), pool.tryAcquire()].map((l) => l?.connection.serial);
    expect(order).toEqual([2, 3, 1]);
  });

  it('goes straight back to idle when the factory has no reset', async () => {
    const { pool } = track(fakePool({ max: 1 }, { withoutReset: true }));
    const lease = await pool.acquire();
    pool.release(lease, { reusable: true });
    expect(pool.stats()).toMatchObject({ idle: 1, inUse: 0, resetting: 0 });
    expect(pool.tryAcquire()?.connection.resets).toBe(0);
  });

  it('is saturated exactly while every ordinary slot is lent (reserved slots do not count)', async () => {
    const { pool } = track(fakePool({ max: 2, reserved: 1 }));
    expect(pool.saturated).toBe(false);
    const a = await pool.acquire();
    expect(pool.saturated).toBe(false);
    const b = await pool.acquire();
    expect(pool.saturated).toBe(true);
    const r = await pool.acquire({ reserved: true });
    expect(r.reserved).toBe(true);
    pool.release(r, { reusable: true });
    expect(pool.saturated).toBe(true);
    pool.release(a, { reusable: true });
    expect(pool.saturated).toBe(true); // still resetting
    await settle();
    expect(pool.saturated).toBe(false);
    pool.release(b, { reusable: false });
    await settle();
    expect(pool.saturated).toBe(false);
  });

  it('tryAcquire answers undefined instead of waiting or connecting', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    expect(pool.tryAcquire()).toBeUndefined();
    expect(factory.createCalls).toBe(0);
  });

  it('never opens more than max connections and serves waiters in FIFO order', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }));
    const order: number[] = [];
    const leases = Array.from({ length: 6 }, (_, i) =>
      pool.acquire().then((lease) => {
        order.push(i);
        return lease;
      }),
    );
    await settle();
    expect(order).toEqual([0, 1]);
    expect(pool.stats()).toMatchObject({ total: 2, inUse: 2, waiters: 4, pendingCreates: 0 });
    for (let i = 0; i < 6; i++) {
      const lease = await leases[i];
      jest.advanceTimersByTime(10);
      pool.release(lease, { reusable: true });
      await settle();
    }
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(factory.createCalls).toBe(2);
    expect(factory.peakOpen).toBe(2);
    expect((await leases[5]).waitMs).toBeGreaterThan(0);
  });

  it('hands a released connection to a waiter without the waiter overtaking earlier ones', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    const first = await pool.acquire();
    const waiting = pool.acquire();
    expect(pool.tryAcquire()).toBeUndefined();
    pool.release(first, { reusable: true });
    await settle();
    // The connection is lent to the waiter, not left idle for a late tryAcquire.
    expect(pool.tryAcquire()).toBeUndefined();
    const second = await waiting;
    expect(second.connectionId).toBe(first.connectionId);
  });
});

describe('release semantics', () => {
  it('closes a connection released as not reusable, with the reason', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    const conn = lease.connection;
    pool.release(lease, { reusable: false, reason: 'query-timeout' });
    expect(conn.destroyedWith).toBe('query-timeout');
    expect(pool.stats()).toMatchObject({ total: 0, idle: 0, inUse: 0, destroys: { 'query-timeout': 1 } });
    const next = await pool.acquire();
    expect(next.connection).not.toBe(conn);
    expect(factory.created).toHaveLength(2);
  });

  it('defaults the close reason to not-reusable', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    pool.release(await pool.acquire(), { reusable: false });
    expect(factory.destroyReasons()).toEqual(['not-reusable']);
  });

  it('refuses a second release with a typed error and leaves the pool intact', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    pool.release(lease, { reusable: true });
    expect(() => pool.release(lease, { reusable: true })).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_DOUBLE_RELEASE' }));
    expect(() => lease.connection).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_LEASE_RELEASED' }));
    expect(lease.released).toBe(true);
    await settle();
    expect(pool.stats()).toMatchObject({ idle: 1, inUse: 0, total: 1, checkouts: 1 });
  });

  it('refuses a lease granted by another pool', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    const { pool: other } = track(fakePool({ backend: 'fake-replica', max: 1 }));
    const lease = await other.acquire();
    expect(() => pool.release(lease, { reusable: true })).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_FOREIGN_LEASE' }));
    other.release(lease, { reusable: true });
  });

  it('closes a connection that died while lent at release, without trying to reset it', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    const conn = lease.connection;
    conn.alive = false;
    pool.release(lease, { reusable: true });
    expect(conn.resets).toBe(0);
    expect(factory.destroyReasons()).toEqual(['dead']);
    expect(pool.stats()).toMatchObject({ total: 0, resetFailures: 0 });
  });

  it('closes a connection whose reset fails and counts it', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    factory.failResets = 1;
    pool.release(lease, { reusable: true });
    await settle();
    expect(pool.stats()).toMatchObject({ resetFailures: 1, total: 0, destroys: { 'reset-failed': 1 } });
    const next = await pool.acquire();
    expect(next.connection.serial).toBe(2);
  });

  it('gives a waiter a fresh connection when the one it was waiting for fails its reset', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    const waiting = pool.acquire();
    factory.failResets = 1;
    pool.release(lease, { reusable: true });
    await settle();
    await settle();
    expect((await waiting).connection.serial).toBe(2);
  });

  it('closes a connection whose reset hangs past resetTimeoutMs', async () => {
    const { pool, factory } = track(fakePool({ max: 1, resetTimeoutMs: 300, sweepIntervalMs: 100 }));
    const lease = await pool.acquire();
    factory.hangResets = true;
    pool.release(lease, { reusable: true });
    await jest.advanceTimersByTimeAsync(250);
    expect(pool.stats().resetting).toBe(1);
    await jest.advanceTimersByTimeAsync(100);
    expect(pool.stats()).toMatchObject({ resetting: 0, total: 0, resetFailures: 1, destroys: { 'reset-timeout': 1 } });
  });
});

describe('acquire deadline and waiter bound', () => {
  it('rejects with DBP_ERR_POOL_ACQUIRE_TIMEOUT naming the pool and the wait', async () => {
    const { pool } = track(fakePool({ max: 1, acquireTimeoutMs: 500 }));
    const held = await pool.acquire();
    const waiting = pool.acquire();
    const outcome = waiting.then(
      () => undefined,
      (err: unknown) => err,
    );
    await jest.advanceTimersByTimeAsync(499);
    expect(pool.stats().waiters).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    const err = await outcome;
    expect(err).toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_TIMEOUT', message: 'no connection from pool fake-primary within 500 ms' });
    expect(pool.stats()).toMatchObject({ waiters: 0, acquireTimeouts: 1 });
    pool.release(held, { reusable: true });
    await settle();
    expect(pool.stats()).toMatchObject({ idle: 1, inUse: 0 });
  });

  it('takes a per-acquire deadline over the pool default', async () => {
    const { pool } = track(fakePool({ max: 1, acquireTimeoutMs: 10_000 }));
    await pool.acquire();
    const waiting = expect(pool.acquire({ timeoutMs: 50 })).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_TIMEOUT' });
    await jest.advanceTimersByTimeAsync(50);
    await waiting;
  });

  it('rejects an invalid per-acquire deadline', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    await pool.acquire();
    await expect(pool.acquire({ timeoutMs: Number.NaN })).rejects.toMatchObject({ code: 'DBP_ERR_POOL_INVALID_OPTIONS' });
    await expect(pool.acquire({ timeoutMs: -1 })).rejects.toMatchObject({ code: 'DBP_ERR_POOL_INVALID_OPTIONS' });
    expect(pool.stats().waiters).toBe(0);
  });

  it('refuses at once beyond maxWaiters', async () => {
    const { pool } = track(fakePool({ max: 1, maxWaiters: 2 }));
    await pool.acquire();
    const queued = [pool.acquire(), pool.acquire()];
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'DBP_ERR_POOL_QUEUE_FULL' });
    expect(pool.stats()).toMatchObject({ waiters: 2, waitersRejected: 1 });
    for (const q of queued) q.catch(() => undefined);
  });

  it('with maxWaiters 0, fails at once when nothing is free', async () => {
    const { pool } = track(fakePool({ max: 1, maxWaiters: 0 }));
    const first = pool.acquire();
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'DBP_ERR_POOL_QUEUE_FULL' });
    first.catch(() => undefined);
  });
});

describe('aborted acquires', () => {
  it('removes the waiter when the client goes away, keeping the others in order', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    const held = await pool.acquire();
    const client = new AbortController();
    const gone = pool.acquire({ signal: client.signal });
    const next = pool.acquire();
    client.abort(new Error('client closed'));
    await expect(gone).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_ABORTED', cause: new Error('client closed') });
    expect(pool.stats()).toMatchObject({ waiters: 1, acquireAborts: 1 });
    pool.release(held, { reusable: true });
    await settle();
    expect((await next).connectionId).toBe(held.connectionId);
  });

  it('rejects an acquire whose signal has already fired', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    await expect(pool.acquire({ signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_ABORTED' });
    expect(factory.createCalls).toBe(0);
  });

  it('keeps the connection being created for an aborted waiter: idle, or for the next waiter', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }, { createDelayMs: 100 }));
    const client = new AbortController();
    const gone = pool.acquire({ signal: client.signal });
    await jest.advanceTimersByTimeAsync(50);
    client.abort();
    await expect(gone).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_ABORTED' });
    expect(pool.stats().pendingCreates).toBe(1);
    await jest.advanceTimersByTimeAsync(50);
    expect(pool.stats()).toMatchObject({ idle: 1, pendingCreates: 0 });
    expect(factory.destroyed).toHaveLength(0);

    const held = pool.tryAcquire(); // the idle one
    expect(held).toBeDefined();
    const other = new AbortController();
    const gone2 = pool.acquire({ signal: other.signal });
    const next = pool.acquire();
    expect(pool.stats()).toMatchObject({ waiters: 2, pendingCreates: 1 });
    other.abort();
    await expect(gone2).rejects.toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_ABORTED' });
    await jest.advanceTimersByTimeAsync(100);
    expect((await next).connection.serial).toBe(2);
    expect(factory.createCalls).toBe(2);
  });

  it('ignores an abort after the lease was granted', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    const client = new AbortController();
    const lease = await pool.acquire({ signal: client.signal });
    client.abort();
    expect(pool.stats().acquireAborts).toBe(0);
    pool.release(lease, { reusable: true });
  });
});

describe('connection failures', () => {
  it('rejects the oldest waiter with DBP_ERR_POOL_CREATE_FAILED carrying the cause', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }));
    factory.failCreates = 1;
    const failed = pool.acquire();
    const outcome = failed.catch((err: unknown) => err);
    await settle();
    const err = await outcome;
    expect(err).toMatchObject({ code: 'DBP_ERR_POOL_CREATE_FAILED', cause: new Error('connection refused') });
    expect(pool.stats()).toMatchObject({ createFailures: 1, total: 0, pendingCreates: 0 });
    expect((await pool.acquire()).connection.serial).toBe(1);
  });

  it('aborts a create that takes longer than connectTimeoutMs', async () => {
    const { pool, factory } = track(fakePool({ max: 1, connectTimeoutMs: 200, acquireTimeoutMs: 5_000 }));
    factory.hangCreates = true;
    const outcome = pool.acquire().catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(200);
    const err = await outcome;
    expect(err).toMatchObject({
      code: 'DBP_ERR_POOL_CREATE_FAILED',
      cause: expect.objectContaining({ code: 'DBP_ERR_POOL_CONNECT_TIMEOUT' }),
    });
    expect(pool.stats()).toMatchObject({ createFailures: 1, pendingCreates: 0 });
  });

  it('skips and closes an idle connection the factory reports dead; the borrower never sees it', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }));
    const [a, b] = await Promise.all([pool.acquire(), pool.acquire()]);
    const liveOne = a.connection;
    const deadOne = b.connection;
    pool.release(a, { reusable: true });
    await settle();
    pool.release(b, { reusable: true });
    await settle();
    deadOne.alive = false; // killed server-side while idle, on top of the stack
    const lease = await pool.acquire();
    expect(lease.connection).toBe(liveOne);
    expect(factory.destroyReasons()).toEqual(['dead']);
  });

  it('replaces a dead idle connection with a new one when it was the only one', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    const conn = lease.connection;
    pool.release(lease, { reusable: true });
    await settle();
    conn.alive = false;
    const next = await pool.acquire();
    expect(next.connection).not.toBe(conn);
    expect(next.connection.alive).toBe(true);
    expect(factory.destroyReasons()).toEqual(['dead']);
  });
});
