// TopologyClient on the embedded bus: generations, KV catch-up, readiness and its reasons, staleness, refresh requests.
import { createBus, EmbeddedBroker, KvRecords, openRecords, publishMessage, serveMessages, Subjects, type Bus, type TopologySnapshot } from '@dbproxy/bus';
import { createSnapshot, validateDocument } from '@dbproxy/config';
import type { ConfigSource } from '@dbproxy/runtime';
import { waitFor } from '@dbproxy/testing';
import { TopologyClient, type ReadinessStatus } from './topology-client';
import type { TopologyView } from './topology-view';

const validated = validateDocument({}, {});
if (!validated.ok) throw new Error('defaults do not validate');
const CONFIG: ConfigSource = { current: () => createSnapshot(1, validated.config, {}), onChange: () => () => undefined };

const snapshot = (generation: number, primaryHealthy = true): TopologySnapshot => ({
  protocol: 'postgres',
  generation,
  epoch: 1,
  publishedAt: new Date().toISOString(),
  shards: [
    {
      shard: 'default',
      backends: [
        { name: 'pg1', address: 'pg1:5432', role: 'primary', weight: 1, healthy: primaryHealthy, lagging: false, shunned: false, draining: false, dnsPin: null },
        { name: 'pg2', address: 'pg2:5432', role: 'replica', weight: 1, healthy: true, lagging: false, shunned: false, draining: false, dnsPin: null },
      ],
    },
  ],
});

describe('TopologyClient (on the embedded bus)', () => {
  let bus: Bus;
  let client: TopologyClient;
  const states: [ReadinessStatus, string | undefined][] = [];
  const publish = (s: TopologySnapshot) => publishMessage(bus, Subjects.topology, { protocol: 'postgres' }, s);
  const start = async (staleAfterMs = 60_000) => {
    client = new TopologyClient({ bus, protocol: 'postgres', config: CONFIG, instanceId: 'edge-1', staleAfterMs, readiness: { set: (_c, status, reason) => void states.push([status, reason]) } });
    await client.start();
  };

  beforeEach(() => {
    bus = createBus({ name: 'client-spec', embedded: new EmbeddedBroker() });
    states.length = 0;
  });
  afterEach(async () => {
    client?.stop();
    await bus.close();
  });

  it('is unready until a snapshot arrives, then follows newer generations only', async () => {
    await start();
    expect(client.readiness()).toEqual({ status: 'unready', reason: 'no postgres topology snapshot received yet' });
    const changes: [TopologyView, TopologyView][] = [];
    client.onChange((next, previous) => changes.push([next, previous]));
    publish(snapshot(10));
    await waitFor(() => client.generation() === 10);
    publish(snapshot(9, false)); // older: ignored
    publish(snapshot(11));
    await waitFor(() => client.generation() === 11);
    expect(changes.map(([n, p]) => [n.generation, p.generation])).toEqual([
      [10, 0],
      [11, 10],
    ]);
    expect(client.usable('default', 'primary').map((b) => b.name)).toEqual(['pg1']);
    expect(client.readiness()).toEqual({ status: 'ready' });
    expect(states).toEqual([
      ['unready', 'no postgres topology snapshot received yet'],
      ['ready', undefined],
    ]);
  });

  it('catches up from KV when it starts after the snapshot was published', async () => {
    const store = await openRecords(bus, KvRecords.topology);
    await store.put({ protocol: 'postgres' }, snapshot(42));
    await start();
    expect(client.generation()).toBe(42);
    expect(client.backend('pg2')?.connectAddress).toBe('pg2:5432');
  });

  it('is unready with the primary and its last error while a shard primary is down', async () => {
    await start();
    publishMessage(bus, Subjects.health, { protocol: 'postgres', backend: 'pg1' }, {
      protocol: 'postgres',
      backend: 'pg1',
      up: false,
      latencyMs: null,
      lagSeconds: null,
      position: null,
      roleObserved: 'unknown',
      checkedAt: new Date().toISOString(),
      error: 'connect ECONNREFUSED 10.0.0.1:5432',
    });
    await waitFor(() => client.lastHealth('pg1') !== undefined);
    publish(snapshot(3, false));
    await waitFor(() => client.generation() === 3);
    expect(client.readiness()).toEqual({ status: 'unready', reason: 'shard default primary pg1 (pg1:5432) is down: connect ECONNREFUSED 10.0.0.1:5432' });
    expect(client.usable('default', 'primary')).toEqual([]);
  });

  it('turns degraded when topology goes quiet, keeping its snapshot, and ready again when it speaks', async () => {
    await start(150);
    publish(snapshot(7));
    await waitFor(() => client.readiness().status === 'ready');
    await waitFor(() => client.readiness().status === 'degraded', { timeoutMs: 2_000 });
    expect(client.readiness().reason).toBe('no word from the topology service for over 0.15 s; serving generation 7');
    expect(client.generation()).toBe(7);
    await waitFor(() => states.some(([s]) => s === 'degraded'), { timeoutMs: 2_000 }); // pushed by the client's own timer
    publish(snapshot(7)); // a re-publish of the same generation is a sign of life
    await waitFor(() => client.readiness().status === 'ready');
  });

  it('asks topology for a refresh, sharing one request among concurrent callers', async () => {
    await start();
    expect(await client.requestRefresh('manual')).toBe(false); // nobody answers
    let requests = 0;
    const serve = serveMessages(bus, Subjects.topologyRefresh.pattern({ protocol: 'postgres' }), async (request) => {
      requests++;
      expect(request).toMatchObject({ protocol: 'postgres', reason: 'moved', requestedBy: 'edge-1', knownGeneration: 0, slot: 12 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      return snapshot(99);
    });
    await serve.ready;
    const answers = await Promise.all([client.requestRefresh('moved', { slot: 12 }), client.requestRefresh('moved', { slot: 12 })]);
    expect(answers).toEqual([true, true]);
    expect(requests).toBe(1);
    expect(client.generation()).toBe(99);
    serve.unsubscribe();
  });
});
