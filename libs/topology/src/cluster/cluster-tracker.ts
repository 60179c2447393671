// The Redis Cluster as topology sees it: the last slot map discovered from [redis.cluster] seeds,
// and its nodes as backends to check (named by node id, one shard per primary).
import type { ConfigSource } from '@dbproxy/runtime';
import type { BackendTarget } from '../targets';
import { SlotDiscovery } from './slot-discovery';
import type { ClusterLayout } from './slot-map';

export class ClusterTracker {
  private layout: ClusterLayout | undefined;
  private readonly discovery = new SlotDiscovery();

  constructor(private readonly config: ConfigSource) {}

  enabled(): boolean {
    return this.config.current().config.redis.cluster.enabled;
  }

  current(): ClusterLayout | undefined {
    return this.layout;
  }

  /** Asks the cluster for its slot map; true when it differs from the last one. */
  async refresh(timeoutMs: number): Promise<boolean> {
    const settings = this.config.current().config.redis.cluster;
    if (!settings.enabled) return this.clear();
    const primaries = (this.layout?.shards ?? []).map((s) => s.nodes[0]?.address).filter((a): a is string => a !== undefined);
    const layout = await this.discovery.discover([...primaries, ...settings.seeds], { username: settings.username, password: settings.password, timeoutMs });
    const changed = JSON.stringify(layout) !== JSON.stringify(this.layout);
    this.layout = layout;
    return changed;
  }

  /** Forgets the layout (cluster disabled); true when there was one. */
  clear(): boolean {
    const had = this.layout !== undefined;
    this.layout = undefined;
    return had;
  }

  targets(): BackendTarget[] {
    const { redis } = this.config.current().config;
    if (!this.layout || !redis.cluster.enabled) return [];
    return this.layout.shards.flatMap((shard) =>
      shard.nodes.map((node) => ({
        protocol: 'redis' as const,
        name: node.id,
        shard: shard.name,
        role: node.role,
        address: node.address,
        weight: 1,
        status: 'online',
        maxLagSeconds: redis.max_replica_lag_seconds,
        credentials: { username: redis.cluster.username, password: redis.cluster.password },
        tls: undefined,
      })),
    );
  }

  slotRanges(): Map<string, readonly (readonly [number, number])[]> {
    return new Map((this.layout?.shards ?? []).map((s) => [s.name, s.slots]));
  }
}
