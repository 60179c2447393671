// The topology snapshots the topology service would publish for redis-edge tests: configured
// backends all healthy, or a Redis Cluster's slot map read with CLUSTER SLOTS (re-read and
// re-published whenever the edge asks for a refresh, as after a MOVED).
import { Redis } from 'ioredis';
import { publishMessage, serveMessages, Subjects, type Bus, type Subscription, type TopologySnapshot } from '@dbproxy/bus';

export interface TopologyBackend {
  readonly name: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
}

type SlotEntry = [number, number, ...[string, number, string][]];

export class TestTopology {
  private generation = Date.now();
  private serving: Subscription | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly epoch: () => number,
    private readonly backends: readonly TopologyBackend[],
    private readonly clusterSeeds: readonly number[] | undefined,
    private readonly clusterPassword: string | undefined,
  ) {}

  async start(): Promise<void> {
    this.serving = serveMessages(this.bus, Subjects.topologyRefresh.pattern({ protocol: 'redis' }), async () => this.publish());
    await this.publish();
  }

  stop(): void {
    this.serving?.unsubscribe();
  }

  /** Builds and publishes a snapshot with a newer generation; returns it. */
  async publish(): Promise<TopologySnapshot> {
    const shards = this.clusterSeeds ? await this.clusterShards(this.clusterSeeds[0]) : this.standaloneShards();
    const snapshot: TopologySnapshot = { protocol: 'redis', generation: ++this.generation, epoch: this.epoch(), publishedAt: new Date().toISOString(), shards };
    publishMessage(this.bus, Subjects.topology, { protocol: 'redis' }, snapshot);
    return snapshot;
  }

  private standaloneShards(): TopologySnapshot['shards'] {
    const names = [...new Set(this.backends.map((b) => b.shard ?? 'default'))];
    return names.map((shard) => ({
      shard,
      backends: this.backends.filter((b) => (b.shard ?? 'default') === shard).map((b) => backend(b.name, `127.0.0.1:${b.port}`, b.role)),
    }));
  }

  private async clusterShards(seed: number): Promise<TopologySnapshot['shards']> {
    const client = new Redis({ host: '127.0.0.1', port: seed, password: this.clusterPassword, maxRetriesPerRequest: 0 });
    try {
      const slots = (await client.call('CLUSTER', 'SLOTS')) as SlotEntry[];
      const byPrimary = new Map<string, { slots: [number, number][]; nodes: [string, number, string][] }>();
      for (const [first, last, ...nodes] of slots) {
        const id = nodes[0][2];
        const entry = byPrimary.get(id) ?? { slots: [], nodes };
        entry.slots.push([first, last]);
        byPrimary.set(id, entry);
      }
      return [...byPrimary].map(([id, { slots: ranges, nodes }]) => ({
        shard: id,
        slots: ranges,
        backends: nodes.map(([host, port, nodeId], i) => backend(nodeId, `${host}:${port}`, i === 0 ? 'primary' : 'replica')),
      }));
    } finally {
      client.disconnect();
    }
  }
}

function backend(name: string, address: string, role: 'primary' | 'replica'): TopologySnapshot['shards'][number]['backends'][number] {
  return { name, address, role, weight: 1, healthy: true, lagging: false, shunned: false, draining: false, dnsPin: null };
}
