// DBPROXY.SHARD <value>: which shard a connection-mode client asked for (value map, hash or
// range over [redis.sharding] map, or a shard name when there is no map), and the shard of a
// client that sent no shard command (default_shard, or refused).
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import { isIntegerText, shardMapFromSettings, type ShardMap } from '@dbproxy/routing';
import { RedisEdgeErrors } from '../errors';

export class ShardSelector {
  private readonly map: ShardMap | undefined;
  private readonly known: ReadonlySet<string>;
  private readonly missing: 'default' | 'refuse';
  private readonly defaultShard: string;

  constructor(config: DeepReadonly<DbproxyConfig>) {
    const sharding = config.redis.sharding;
    this.map = sharding.map ? shardMapFromSettings(sharding.map) : undefined;
    this.known = new Set(config.redis_backends.map((b) => b.shard));
    this.missing = sharding.missing;
    this.defaultShard = sharding.default_shard;
  }

  /** The shard `value` selects, or the -ERR to send before any backend is contacted. */
  resolve(value: string): string | Error {
    if (value.length === 0) return RedisEdgeErrors.shardInvalid(value, 'empty value');
    if (!this.map) return this.known.has(value) ? value : RedisEdgeErrors.shardUnmapped(value);
    if (this.map.kind === 'range' && !isIntegerText(value)) return RedisEdgeErrors.shardInvalid(value, 'a range map needs an integer');
    const shard = this.map.shardFor(value);
    return shard === undefined ? RedisEdgeErrors.shardUnmapped(value) : shard;
  }

  /** The shard of a client whose first command is not DBPROXY.SHARD. */
  withoutShardCommand(): string | Error {
    return this.missing === 'refuse' ? RedisEdgeErrors.shardMissing() : this.defaultShard;
  }
}
