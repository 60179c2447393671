// Retire-on-release as spec 001 "Connection Retirement" states it: a drain marks lent connections
// unhealthy and not reusable (lease.retiring), they finish their ownership and are destroyed when
// released whatever reset path they take, and none ever returns to the idle list; offline_hard
// (closeConnections) closes them at once.
import { fakePool } from './testing';
import { closePoolsAfterEach, settle } from './testing/tracked-pools';

const track = closePoolsAfterEach();

describe('retire-on-release', () => {
  it('marks a lent connection retiring at once and keeps it usable by its borrower until release', async () => {
    const { pool } = track(fakePool({ max: 2 }));
    const lease = await pool.acquire();
    expect(lease.retiring).toBe(false);
    pool.retire('drain');
    expect(lease.retiring).toBe(true);
    // the borrower's ownership goes on: the connection is still there and open
    expect(lease.connection.alive).toBe(true);
    const other = await pool.acquire();
    expect(other.retiring).toBe(false);
    expect(other.connection.serial).toBe(2);
    pool.release(other, { reusable: true });
  });

  it('reset path: a retiring connection released as reusable is destroyed without a reset and never parked idle', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    const conn = lease.connection;
    pool.retire('drain');
    expect(lease.retiring).toBe(true);
    pool.release(lease, { reusable: true });
    await settle();
    expect(conn.resets).toBe(0);
    expect(conn.destroyedWith).toBe('drain');
    expect(pool.stats()).toMatchObject({ idle: 0, total: 0 });
    const next = await pool.acquire();
    expect(next.connection.serial).toBe(2);
    expect(factory.destroyReasons()).toEqual(['drain']);
    pool.release(next, { reusable: true });
  });

  it('reset path: retired while its reset runs, it is closed when the reset ends (passed or failed), never lent again', async () => {
    const { pool, factory } = track(fakePool({ max: 2 }, { resetDelayMs: 50 }));
    const [a, b] = await Promise.all([pool.acquire(), pool.acquire()]);
    const [ca, cb] = [a.connection, b.connection];
    factory.failResets = 1;
    pool.release(a, { reusable: true }); // this reset fails
    factory.failResets = 0;
    pool.release(b, { reusable: true });
    pool.retire('drain');
    expect(a.retiring).toBe(true);
    expect(b.retiring).toBe(true);
    const waiting = pool.acquire();
    await jest.advanceTimersByTimeAsync(50);
    const fresh = await waiting;
    expect(fresh.connection.serial).toBeGreaterThan(2);
    expect(ca.destroyedWith).toBeDefined();
    expect(cb.destroyedWith).toBe('drain');
    expect(pool.stats().idle).toBe(0);
    pool.release(fresh, { reusable: true });
  });

  it('idle return: without a reset step, a retiring connection released as reusable closes instead of going idle', async () => {
    const { pool } = track(fakePool({ max: 1 }, { withoutReset: true }));
    const lease = await pool.acquire();
    const conn = lease.connection;
    pool.retire('drain');
    expect(lease.retiring).toBe(true);
    pool.release(lease, { reusable: true });
    expect(conn.destroyedWith).toBe('drain');
    expect(pool.stats()).toMatchObject({ idle: 0, total: 0 });
  });

  it('a new factory (connection changed) retires the lent connections too', async () => {
    const { pool, factory } = track(fakePool({ max: 1 }));
    const lease = await pool.acquire();
    pool.replaceFactory(factory, 'connection-changed');
    expect(lease.retiring).toBe(true);
    pool.release(lease, { reusable: true });
    expect(factory.destroyReasons()).toEqual(['connection-changed']);
  });

  it('close: closeConnections closes idle, lent and resetting connections now; late releases are no-ops; the pool keeps serving', async () => {
    const { pool, factory } = track(fakePool({ max: 3 }, { resetDelayMs: 100 }));
    const [a, b, c] = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    pool.release(c, { reusable: true });
    await jest.advanceTimersByTimeAsync(100); // c idle
    pool.release(b, { reusable: true }); // b resetting
    expect(pool.stats()).toMatchObject({ idle: 1, resetting: 1 });
    const lent = a.connection;
    pool.closeConnections('offline_hard');
    expect(a.retiring).toBe(true);
    expect(lent.destroyedWith).toBe('offline_hard');
    expect(factory.destroyReasons()).toEqual(['offline_hard', 'offline_hard', 'offline_hard']);
    expect(pool.stats()).toMatchObject({ total: 0, idle: 0, inUse: 0 });
    pool.release(a, { reusable: true });
    await jest.advanceTimersByTimeAsync(100);
    expect(factory.destroyed).toHaveLength(3);
    expect(pool.isOpen).toBe(true);
    const fresh = await pool.acquire();
    expect(fresh.connection.serial).toBe(4);
    expect(fresh.retiring).toBe(false);
    pool.release(fresh, { reusable: true });
  });
});
