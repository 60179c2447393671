// TopologyView: usable backends per shard and role, connect addresses, primaries down, slot owners.
import type { TopologyBackend, TopologySnapshot } from '@dbproxy/bus';
import { pinnedAddress, testHostAddress, TopologyView } from './topology-view';

const backend = (name: string, over: Partial<TopologyBackend> = {}): TopologyBackend => ({
  name,
  address: `${name}.db:3306`,
  role: 'replica',
  weight: 1,
  healthy: true,
  lagging: false,
  shunned: false,
  draining: false,
  dnsPin: null,
  ...over,
});
const snapshot = (shards: TopologySnapshot['shards'], generation = 5): TopologySnapshot => ({ protocol: 'mysql', generation, epoch: 3, publishedAt: new Date(0).toISOString(), shards });

describe('TopologyView', () => {
  const view = TopologyView.of(
    snapshot([
      {
        shard: 's1',
        backends: [
          backend('p1', { role: 'primary', draining: true, dnsPin: '10.0.0.7' }),
          backend('ok'),
          backend('down', { healthy: false }),
          backend('lag', { lagging: true }),
          backend('shun', { shunned: true }),
          backend('drain', { draining: true }),
        ],
      },
      { shard: 's2', backends: [backend('p2', { role: 'primary', shunned: true }), backend('r2')] },
      { shard: 's3', backends: [backend('p3', { role: 'primary', healthy: false })] },
    ]),
  );

  it('answers usable backends per shard and role from precomputed lists', () => {
    expect(view.usable('s1', 'replica').map((b) => b.name)).toEqual(['ok']);
    expect(view.usable('s1', 'replica')).toBe(view.usable('s1', 'replica'));
    // a draining primary keeps taking writes (there is no other); a shunned one does not
    expect(view.usable('s1', 'primary').map((b) => b.name)).toEqual(['p1']);
    expect(view.usable('s2', 'primary')).toEqual([]);
    expect(view.usable('nope', 'replica')).toEqual([]);
    expect(view.primary('s2')?.name).toBe('p2');
  });

  it('gives each backend its shard and connect address (the DNS pin when there is one)', () => {
    expect(view.backend('p1')).toMatchObject({ shard: 's1', address: 'p1.db:3306', connectAddress: '10.0.0.7:3306', dnsPin: '10.0.0.7' });
    expect(view.backend('r2')).toMatchObject({ shard: 's2', connectAddress: 'r2.db:3306' });
    expect(Object.isFrozen(view.backend('r2'))).toBe(true);
    expect(view.backend('nobody')).toBeUndefined();
    expect(view.shards()).toEqual(['s1', 's2', 's3']);
    expect([view.generation, view.epoch]).toEqual([5, 3]);
  });

  it('lists shards whose primary is down', () => {
    expect(view.primariesDown.map((d) => [d.shard, d.backend?.name])).toEqual([['s3', 'p3']]);
    const headless = TopologyView.of(snapshot([{ shard: 'x', backends: [backend('r')] }]));
    expect(headless.primariesDown).toEqual([{ shard: 'x', backend: undefined }]);
  });

  it('maps every Redis Cluster slot to its shard primary', () => {
    const cluster = TopologyView.of(
      snapshot([
        { shard: 'a', slots: [[0, 99], [101, 8191]], backends: [backend('ma', { role: 'primary' }), backend('ra')] },
        { shard: 'b', slots: [[100, 100], [8192, 16383]], backends: [backend('mb', { role: 'primary' })] },
      ]),
    );
    expect([0, 99, 100, 101, 8191, 8192, 16383].map((slot) => cluster.slotOwner(slot)?.name)).toEqual(['ma', 'ma', 'mb', 'ma', 'ma', 'mb', 'mb']);
    expect(view.slotOwner(0)).toBeUndefined();
  });

  it('is empty before the first snapshot', () => {
    const empty = TopologyView.empty('redis');
    expect([empty.generation, empty.snapshot, empty.usable('default', 'primary')]).toEqual([0, undefined, []]);
  });

  it('writes pinned addresses with IPv6 in brackets', () => {
    expect(pinnedAddress('db.example:5432', null)).toBe('db.example:5432');
    expect(pinnedAddress('db.example:5432', '192.0.2.1')).toBe('192.0.2.1:5432');
    expect(pinnedAddress('[::1]:5432', 'fd00::1')).toBe('[fd00::1]:5432');
  });
});

describe('TopologyView: a writer lent to the readers (blue/green, every blue reader shunned)', () => {
  it('counts a primary with servesReads among the usable replicas, and only then', () => {
    const lent = TopologyView.of(snapshot([{ shard: 's', backends: [backend('w', { role: 'primary', servesReads: true }), backend('r', { shunned: true })] }]));
    expect(lent.usable('s', 'replica').map((b) => b.name)).toEqual(['w']);
    const notLent = TopologyView.of(snapshot([{ shard: 's', backends: [backend('w', { role: 'primary' }), backend('r', { shunned: true })] }]));
    expect(notLent.usable('s', 'replica')).toEqual([]);
  });
});

describe('testHostAddress (test-only proxy.test_hosts)', () => {
  it('answers a mapped hostname with its IP and leaves others alone', () => {
    expect(testHostAddress('Orders.sim:3306', { 'orders.sim': '127.0.0.9' })).toBe('127.0.0.9:3306');
    expect(testHostAddress('other.sim:3306', { 'orders.sim': '127.0.0.9' })).toBe('other.sim:3306');
  });
});
