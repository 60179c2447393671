// Asks Redis Cluster nodes for the slot map: known primaries first, then the configured seeds,
// CLUSTER SHARDS where the server has it and CLUSTER SLOTS otherwise.
import { Redis } from 'ioredis';
import { describeError } from '../checks/monitor-connection';
import { TopologyErrors } from '../errors';
import { splitAddress } from '../targets';
import { parseClusterShards, parseClusterSlots, type ClusterLayout } from './slot-map';

export interface DiscoveryOptions {
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly timeoutMs: number;
}

const unknownSubcommand = (err: unknown) => /unknown (sub)?command/i.test(describeError(err));

export class SlotDiscovery {
  /** Set once a server refused CLUSTER SHARDS (Redis before 7.0). */
  private slotsOnly = false;

  /** The layout from the first of `candidates` that answers. */
  async discover(candidates: readonly string[], opts: DiscoveryOptions): Promise<ClusterLayout> {
    const failures: string[] = [];
    for (const address of new Set(candidates)) {
      try {
        return await this.ask(address, opts);
      } catch (err) {
        failures.push(`${address}: ${describeError(err)}`);
      }
    }
    throw TopologyErrors.clusterUnreachable(failures.join('; ') || 'no seeds configured');
  }

  private async ask(address: string, opts: DiscoveryOptions): Promise<ClusterLayout> {
    const { host, port } = splitAddress(address);
    const redis = new Redis({
      host,
      port,
      ...(opts.username ? { username: opts.username } : {}),
      ...(opts.password ? { password: opts.password } : {}),
      lazyConnect: true,
      connectTimeout: opts.timeoutMs,
      commandTimeout: opts.timeoutMs,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      enableReadyCheck: false,
    });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      if (!this.slotsOnly) {
        try {
          return parseClusterShards(await redis.call('CLUSTER', 'SHARDS'));
        } catch (err) {
          if (!unknownSubcommand(err)) throw err;
          this.slotsOnly = true;
        }
      }
      return parseClusterSlots(await redis.call('CLUSTER', 'SLOTS'));
    } finally {
      redis.disconnect();
      redis.stream?.destroy();
    }
  }
}
