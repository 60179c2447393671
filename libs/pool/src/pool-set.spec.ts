// PoolSet: pools keyed by backend, kept across config epochs, resized in place, drained when removed.
import { FakeConnectionFactory, type FakeConnection } from './testing';
import { PoolSet, type BackendPoolConfig } from './pool-set';

const sets: PoolSet<FakeConnection>[] = [];
function makeSet(): PoolSet<FakeConnection> {
  const set = new PoolSet<FakeConnection>({ removedDrainDeadlineMs: 1_000 });
  sets.push(set);
  return set;
}

beforeEach(() => jest.useFakeTimers());
afterEach(async () => {
  await Promise.all(sets.splice(0).map((s) => s.close()));
  jest.useRealTimers();
});

const settle = () => jest.advanceTimersByTimeAsync(0);
const primary = new FakeConnectionFactory();
const replica = new FakeConnectionFactory();
const config = (backend: string, factory: FakeConnectionFactory, max: number, extra: Partial<BackendPoolConfig<FakeConnection>> = {}) => ({
  backend,
  factory,
  max,
  ...extra,
});

describe('PoolSet', () => {
  it('makes a pool per backend and routes acquires by name', async () => {
    const set = makeSet();
    expect(set.configure(1, [config('app-primary', primary, 2), config('app-replica', replica, 3)])).toBe(true);
    expect(set.epoch).toBe(1);
    expect(set.backends()).toEqual(['app-primary', 'app-replica']);
    const lease = await set.acquire('app-replica');
    expect(lease.backend).toBe('app-replica');
    set.release(lease, { reusable: true });
    await settle();
    expect(set.stats().map((s) => [s.backend, s.max, s.idle])).toEqual([
      ['app-primary', 2, 0],
      ['app-replica', 3, 1],
    ]);
    expect(set.tryAcquire('app-replica')?.connectionId).toBe(lease.connectionId);
  });

  it('rejects unknown backends with DBP_ERR_POOL_UNKNOWN_BACKEND', async () => {
    const set = makeSet();
    set.configure(1, [config('app-primary', primary, 1)]);
    await expect(set.acquire('nope')).rejects.toMatchObject({ code: 'DBP_ERR_POOL_UNKNOWN_BACKEND' });
    expect(() => set.pool('nope')).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_UNKNOWN_BACKEND' }));
    expect(set.get('nope')).toBeUndefined();
  });

  it('keeps the pools and connections of backends that stay, resizing them in place', async () => {
    const set = makeSet();
    set.configure(1, [config('app-primary', new FakeConnectionFactory(), 1)]);
    const pool = set.pool('app-primary');
    const held = await set.acquire('app-primary');
    const waiting = set.acquire('app-primary');
    set.configure(2, [config('app-primary', new FakeConnectionFactory(), 2)]);
    expect(set.pool('app-primary')).toBe(pool);
    expect(pool.options.max).toBe(2);
    const second = await waiting;
    expect(second.connectionId).not.toBe(held.connectionId);
    set.release(held, { reusable: true });
    await settle();
    expect(pool.stats()).toMatchObject({ total: 2, idle: 1, destroys: {} });
  });

  it('ignores an epoch that is not newer', () => {
    const set = makeSet();
    set.configure(5, [config('a', primary, 1)]);
    expect(set.configure(5, [config('b', primary, 1)])).toBe(false);
    expect(set.configure(4, [])).toBe(false);
    expect(set.backends()).toEqual(['a']);
  });

  it('drains the pool of a removed backend; its leases still release to it', async () => {
    const set = makeSet();
    const factory = new FakeConnectionFactory();
    set.configure(1, [config('old', factory, 2), config('new', replica, 1)]);
    const oldPool = set.pool('old');
    const lease = await set.acquire('old');
    set.configure(2, [config('new', replica, 1)]);
    expect(set.get('old')).toBeUndefined();
    await expect(set.acquire('old')).rejects.toMatchObject({ code: 'DBP_ERR_POOL_UNKNOWN_BACKEND' });
    expect(oldPool.isOpen).toBe(false);
    set.release(lease, { reusable: true });
    expect(factory.destroyReasons()).toEqual(['pool-closed']);
    expect(oldPool.stats().total).toBe(0);
  });

  it('re-adding a removed backend makes a new pool while the old one drains', async () => {
    const set = makeSet();
    set.configure(1, [config('db', primary, 1)]);
    const first = set.pool('db');
    const lease = await set.acquire('db');
    set.configure(2, []);
    set.configure(3, [config('db', primary, 1)]);
    expect(set.pool('db')).not.toBe(first);
    expect((await set.acquire('db')).pool).toBe(set.pool('db'));
    set.release(lease, { reusable: true });
  });

  it('takes a new factory and retires the connections when the connection key changes', async () => {
    const set = makeSet();
    const before = new FakeConnectionFactory();
    const after = new FakeConnectionFactory();
    set.configure(1, [config('db', before, 2, { connectionKey: '10.0.0.1:3306/app' })]);
    const held = await set.acquire('db');
    set.release(await set.acquire('db'), { reusable: true });
    await settle();
    // Same key, new factory object: nothing changes.
    set.configure(2, [config('db', after, 2, { connectionKey: '10.0.0.1:3306/app' })]);
    expect(before.destroyed).toHaveLength(0);
    set.configure(3, [config('db', after, 2, { connectionKey: '10.0.0.2:3306/app' })]);
    expect(before.destroyReasons()).toEqual(['connection-changed']);
    const fresh = await set.acquire('db');
    expect(after.created).toHaveLength(1);
    expect(fresh.connection).toBe(after.created[0]);
    set.release(held, { reusable: true });
    expect(before.destroyReasons()).toEqual(['connection-changed', 'connection-changed']);
  });

  it('validates the whole configuration before changing anything', () => {
    const set = makeSet();
    set.configure(1, [config('a', primary, 1)]);
    expect(() => set.configure(2, [config('b', primary, 1), config('b', primary, 2)])).toThrow(/named twice/);
    expect(() => set.configure(2, [config('b', primary, 1), config('c', primary, 0)])).toThrow(
      expect.objectContaining({ code: 'DBP_ERR_POOL_INVALID_OPTIONS' }),
    );
    expect(set.backends()).toEqual(['a']);
    expect(set.epoch).toBe(1);
  });

  it('drains every pool, removed ones included, and takes no configuration afterwards', async () => {
    const set = makeSet();
    const a = new FakeConnectionFactory();
    const b = new FakeConnectionFactory();
    set.configure(1, [config('a', a, 1), config('b', b, 1)]);
    const leaseA = await set.acquire('a');
    const leaseB = await set.acquire('b');
    set.configure(2, [config('b', b, 1)]);
    let drained = false;
    const draining = set.drain({ deadlineMs: 5_000 }).then(() => (drained = true));
    expect(() => set.configure(3, [])).toThrow(expect.objectContaining({ code: 'DBP_ERR_POOL_CLOSED' }));
    set.release(leaseB, { reusable: true });
    await settle();
    expect(drained).toBe(false);
    set.release(leaseA, { reusable: true });
    await draining;
    expect(a.open + b.open).toBe(0);
  });
});
