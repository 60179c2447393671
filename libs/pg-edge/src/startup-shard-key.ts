// StartupShardKey: the shard a PostgreSQL connection names in its startup packet
// ([postgres.sharding] parameter, directly or as `-c name=value` in `options`), taken out before forwarding.
import type { PostgresConfig, DeepReadonly } from '@dbproxy/config';
import type { StartupMessage } from '@dbproxy/protocol-pg';
import { takeStartupSetting } from '@dbproxy/protocol-pg';
import { isIntegerText, shardMapFromSettings, type RouteChoice, type ShardMap } from '@dbproxy/routing';
import { PgEdgeErrors } from './errors';

export type ShardingConfig = DeepReadonly<PostgresConfig['sharding']>;

export type ShardResolution =
  | { readonly ok: true; readonly shard: string; readonly key: string | undefined; readonly message: StartupMessage; readonly route?: RouteChoice }
  | { readonly ok: false; readonly error: Error; readonly routeRefused?: boolean };

export class StartupShardKey {
  private readonly map: ShardMap | undefined;

  constructor(private readonly config: ShardingConfig) {
    this.map = config.enabled && config.map ? shardMapFromSettings(config.map) : undefined;
  }

  /** True when the shard key must be read from the startup packet (so TLS cannot pass through). */
  get enabled(): boolean {
    return this.config.enabled;
  }

  get parameter(): string {
    return this.config.parameter;
  }

  /** The shard for this startup, and the startup with the parameter removed (it is removed even when sharding is off). */
  resolve(startup: StartupMessage): ShardResolution {
    const { value, message } = takeStartupSetting(startup, this.config.parameter);
    if (!this.map) return { ok: true, shard: this.config.default_shard, key: value, message };
    if (value === undefined) {
      if (this.config.missing === 'default') return { ok: true, shard: this.config.default_shard, key: undefined, message };
      return { ok: false, error: PgEdgeErrors.shardMissing(this.config.parameter) };
    }
    if (value.length === 0 || value.length > 256 || (this.map.kind === 'range' && !isIntegerText(value))) {
      return { ok: false, error: PgEdgeErrors.shardInvalid(value.slice(0, 64)) };
    }
    const shard = this.map.shardFor(value);
    if (shard === undefined) return { ok: false, error: PgEdgeErrors.shardUnknown(value.slice(0, 64)) };
    return { ok: true, shard, key: value, message };
  }
}
