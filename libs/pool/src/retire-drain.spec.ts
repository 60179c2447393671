// Retire-on-release (drain actions) and pool drain/close, on fake connections.
import { fakePool } from './testing';
import { closePoolsAfterEach, settle } from './testing/tracked-pools';

const track = closePoolsAfterEach();

describe('retire', () => {
  it('closes idle connections now and lent ones when released, never resetting them', async () => {
    const { pool, factory } = track(fakePool({ max: 3 }));
    const [a, b, c] = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    pool.release(c, { reusable: true });
    await settle();
    pool.release(b, { reusable: false, reason: 'query-timeout' });
    pool.retire('bgd-switchover');
    expect(factory.destroyReasons()).toEqual(['query-timeout', 'bgd-switchover']);
    expect(pool.stats()).toMatchObject({ total: 1, inUse: 1, idle: 0 });

    const old = a.connection;
    pool.release(a, { reusable: true });
    expect(old.destroyedWith).toBe('bgd-switchover');
    expect(old.resets).toBe(0);
    expect(pool.stats()).toMatchObject({ total: 0, destroys: { 'bgd-switchover': 2, 'query-timeout': 1 } });

    const fresh = await pool.acquire();
    expect(fresh.connection.serial).toBe(4);
  });

  it('closes a connection that was being reset when retire came, once the reset ends', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }, { resetDelayMs: 100 }));
    const lease = await pool.acquire();
    const conn = lease.connection;
    pool.release(lease, { reusable: true });
    pool.retire('drain-backend');
    expect(pool.stats().idle).toBe(0);
    await jest.advanceTimersByTimeAsync(100);
    expect(conn.destroyedWith).toBe('drain-backend');
    expect(factory.open).toBe(0);
  });

  it('closes on arrival a connection that was being created when retire came', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }, { createDelayMs: 100 }));
    const waiting = pool.acquire();
    await jest.advanceTimersByTimeAsync(50);
    pool.retire('dns-moved');
    await jest.advanceTimersByTimeAsync(50);
    expect(factory.destroyReasons()).toEqual(['dns-moved']);
    // The waiter is served by a connection made after the retire.
    await jest.advanceTimersByTimeAsync(100);
    expect((await waiting).connection.serial).toBe(2);
  });

  it('keeps serving while it retires: new borrowers get new connections', async () => {
    const { pool } = track(fakePool({ max: 2 }));
    const old = await pool.acquire();
    pool.retire('switchover');
    const fresh = await pool.acquire();
    expect(fresh.connectionId).not.toBe(old.connectionId);
    pool.release(old, { reusable: true });
    pool.release(fresh, { reusable: true });
    await settle();
    expect(pool.stats()).toMatchObject({ total: 1, idle: 1 });
  });
});

describe('drain and close', () => {
  it('refuses new acquires and rejects waiters with DBP_ERR_POOL_CLOSED, then waits for leases', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }));
    const [a, b] = await Promise.all([pool.acquire(), pool.acquire()]);
    pool.release(b, { reusable: true });
    await settle();
    const c = await pool.acquire();
    const waiting = pool.acquire();
    let drained = false;
    const draining = pool.drain({ deadlineMs: 1_000 }).then(() => (drained = true));
    await expect(waiting).rejects.toMatchObject({ code: 'DBP_ERR_POOL_CLOSED' });
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'DBP_ERR_POOL_CLOSED' });
    expect(() => pool.tryAcquire()).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_CLOSED' }));
    expect(pool.isOpen).toBe(false);

    pool.release(a, { reusable: true });
    await settle();
    expect(drained).toBe(false);
    pool.release(c, { reusable: true });
    await draining;
    expect(factory.destroyReasons()).toEqual(['pool-closed', 'pool-closed']);
    expect(factory.open).toBe(0);
  });

  it('closes what is still lent at the deadline; the late release is then harmless', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    const conn = lease.connection;
    let drained = false;
    const draining = pool.drain({ deadlineMs: 500 }).then(() => (drained = true));
    await jest.advanceTimersByTimeAsync(499);
    expect(drained).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await draining;
    expect(conn.destroyedWith).toBe('drain-deadline');
    pool.release(lease, { reusable: true });
    expect(() => pool.release(lease, { reusable: true })).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_DOUBLE_RELEASE' }));
    expect(factory.destroyed).toHaveLength(1);
  });

  it('close() closes everything at once, aborting creates in flight', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }, { createDelayMs: 1_000 }));
    factory.hangCreates = true;
    const waiting = pool.acquire();
    expect(pool.stats().pendingCreates).toBe(1);
    const closing = pool.close();
    await expect(waiting).rejects.toMatchObject({ code: 'DBP_ERR_POOL_CLOSED' });
    await closing;
    expect(pool.stats()).toMatchObject({ total: 0, pendingCreates: 0 });
  });

  it('returns the same promise when drained twice, and retire after close does nothing', async () => {
    const { pool } = track(fakePool({ max: 1 }));
    const first = pool.drain();
    expect(pool.drain()).toBe(first);
    await first;
    pool.retire('late');
    expect(pool.stats().total).toBe(0);
  });

  it('waits for asynchronous destroys before it resolves', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    let finishDestroy: () => void = () => undefined;
    factory.destroy = (connection) => {
      connection.alive = false;
      return new Promise<void>((resolve) => (finishDestroy = resolve));
    };
    pool.release(await pool.acquire(), { reusable: true });
    await settle();
    let drained = false;
    const draining = pool.close().then(() => (drained = true));
    await settle();
    expect(pool.stats().pendingDestroys).toBe(1);
    expect(drained).toBe(false);
    finishDestroy();
    await draining;
    expect(pool.stats().pendingDestroys).toBe(0);
  });
});
