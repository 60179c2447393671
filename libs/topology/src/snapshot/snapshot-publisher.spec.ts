// SnapshotPublisher on the embedded bus: change detection, growing generations, re-publish, KV copy.
import { createBus, EmbeddedBroker, KvRecords, openRecords, subscribeMessages, Subjects, type Bus, type TopologyShard, type TopologySnapshot } from '@dbproxy/bus';
import { waitFor } from '@dbproxy/testing';
import { SnapshotPublisher, type PublishTrigger } from './snapshot-publisher';

const shard = (healthy: boolean): TopologyShard[] => [
  { shard: 'default', backends: [{ name: 'db1', address: 'h:1', role: 'primary', weight: 1, healthy, lagging: false, shunned: false, draining: false, dnsPin: null }] },
];

describe('SnapshotPublisher (on the embedded bus)', () => {
  let bus: Bus;
  const received: TopologySnapshot[] = [];
  const triggers: PublishTrigger[] = [];
  let publisher: SnapshotPublisher;

  beforeEach(async () => {
    bus = createBus({ name: 'publisher-spec', embedded: new EmbeddedBroker() });
    received.length = 0;
    triggers.length = 0;
    await subscribeMessages(bus, Subjects.topology.pattern({ protocol: 'mysql' }), (s) => void received.push(s)).ready;
    publisher = new SnapshotPublisher(bus, 'mysql', { published: (_s, t) => void triggers.push(t), kvFailed: (err) => { throw err; } });
    publisher.attach(await openRecords(bus, KvRecords.topology));
  });

  afterEach(() => bus.close());

  it('publishes on change only, with generations that grow and exceed any generation seen before', async () => {
    const ahead = Date.now() + 1_000_000; // a snapshot from a clock ahead of ours
    publisher.observe(ahead);
    const first = publisher.offer(1, shard(true), 'change');
    expect(first.generation).toBe(ahead + 1);
    expect(publisher.offer(1, shard(true), 'change')).toBe(first); // unchanged: nothing sent
    const second = publisher.offer(1, shard(false), 'change');
    const third = publisher.offer(2, shard(false), 'change'); // a new epoch is a change too
    expect(second.generation).toBe(first.generation + 1);
    expect(third.generation).toBe(second.generation + 1);
    const forced = publisher.offer(2, shard(false), 'refresh', true);
    expect(forced.generation).toBe(third.generation + 1);
    await waitFor(() => received.length === 4);
    expect(received.map((s) => [s.generation, s.epoch, s.shards[0]?.backends[0]?.healthy])).toEqual([
      [first.generation, 1, true],
      [second.generation, 1, false],
      [third.generation, 2, false],
      [forced.generation, 2, false],
    ]);
    expect(triggers).toEqual(['change', 'change', 'change', 'refresh']);
  });

  it('re-publishes the same snapshot as a sign of life and keeps the last one in KV for late joiners', async () => {
    expect(publisher.current()).toBeUndefined();
    publisher.republish(); // nothing yet: nothing sent
    const snapshot = publisher.offer(3, shard(true), 'change');
    publisher.republish();
    await waitFor(() => received.length === 2);
    expect(received[1]).toEqual(snapshot);
    const store = await openRecords(bus, KvRecords.topology);
    await waitFor(async () => (await store.get({ protocol: 'mysql' }))?.value?.generation === snapshot.generation);
    expect((await store.get({ protocol: 'mysql' }))?.value).toEqual(snapshot);
    expect(triggers).toEqual(['change', 'republish']);
  });
});
