// Which lending a pipelined read joins: only a saturated pool's, the least shared below the depth,
// whose connection fits; retired lendings are never joined; the last to leave returns the lease.
import type { Lease } from '@dbproxy/pool';
import type { BackendConnection } from './backend-connection';
import type { ConnectionPool } from './parked-leases';
import { Pipelines, type SharedLending } from './pipelines';

function fakePool(saturated: boolean): ConnectionPool {
  return { backend: 'db', saturated } as unknown as ConnectionPool;
}

function lease(pool: ConnectionPool, id: number, alive = true, retiring = false): Lease<BackendConnection> {
  return { pool, retiring, connection: { id, alive } as BackendConnection } as unknown as Lease<BackendConnection>;
}

/** What an exchange checks first: the lending's connection is open. */
const any = (lending: SharedLending): boolean => lending.connection.alive;

describe('Pipelines', () => {
  it('joins only while the pool is saturated', () => {
    const pipelines = new Pipelines();
    const idle = fakePool(false);
    pipelines.open(lease(idle, 1));
    expect(pipelines.join(idle, 4, any)).toBeUndefined();
    const full = fakePool(true);
    const opened = pipelines.open(lease(full, 2));
    expect(pipelines.join(full, 4, any)).toBe(opened);
    expect(opened.units).toBe(2);
  });

  it('picks the least shared lending below the depth whose connection fits and is alive', () => {
    const pipelines = new Pipelines();
    const pool = fakePool(true);
    const a = pipelines.open(lease(pool, 1));
    const b = pipelines.open(lease(pool, 2));
    const dead = pipelines.open(lease(pool, 3, false));
    expect(pipelines.join(pool, 3, any)).toBe(a);
    expect(pipelines.join(pool, 3, any)).toBe(b);
    expect(pipelines.join(pool, 3, (lending) => lending.connection.id === 2)).toBe(b);
    expect(pipelines.join(pool, 3, any)).toBe(a);
    expect([a.units, b.units]).toEqual([3, 3]);
    expect(pipelines.join(pool, 3, any)).toBeUndefined(); // both at the depth; the dead one is never chosen
    expect(dead.units).toBe(1);
  });

  it('never joins a lending whose connection a drain retired', () => {
    const pipelines = new Pipelines();
    const pool = fakePool(true);
    const drained = { retiring: false };
    const l = lease(pool, 1);
    Object.defineProperty(l, 'retiring', { get: () => drained.retiring });
    const a = pipelines.open(l);
    drained.retiring = true;
    expect(pipelines.join(pool, 4, any)).toBeUndefined();
    const b = pipelines.open(lease(pool, 2));
    expect(pipelines.join(pool, 4, any)).toBe(b);
    expect(a.units).toBe(1);
  });

  it('forgets a retired lending and tells the last one out that the lease is its own', () => {
    const pipelines = new Pipelines();
    const pool = fakePool(true);
    const a = pipelines.open(lease(pool, 1));
    pipelines.join(pool, 4, any);
    pipelines.retire(a);
    expect(a.reusable).toBe(false);
    expect(pipelines.join(pool, 4, any)).toBeUndefined();
    expect(pipelines.leave(a)).toBe(false);
    expect(pipelines.leave(a)).toBe(true);
    expect(pipelines.count()).toBe(0);
  });
});
