// What connection-mode sessions of a process share: the shard selector of the configuration in
// force, the backend choice (primary, or a weighted replica by open sessions with fallback) and
// telemetry.
import type { ConfigSnapshot } from '@dbproxy/config';
import type { Tracer } from '@opentelemetry/api';
import { ReplicaSelector } from '@dbproxy/routing';
import type { ConfigSource } from '@dbproxy/runtime';
import type { TopologyClient } from '@dbproxy/topology-client';
import { RedisEdgeErrors } from '../errors';
import type { RedisAdmin } from '../admin-sessions';
import type { RedisEdgeMetrics } from '../metrics';
import { ShardSelector } from './shard-selector';

export interface ConnectionSettings {
  readonly queryBufferLimit: number;
  readonly maxBulkBytes: number;
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
}

export interface BackendTarget {
  readonly name: string;
  readonly address: string;
}

export class ConnectionEdge {
  private snapshot: ConfigSnapshot | undefined;
  private cached: { selector: ShardSelector; settings: ConnectionSettings; replicas: ReplicaSelector } | undefined;
  /** Connection-mode sessions open per backend in this process. */
  private readonly load = new Map<string, number>();

  constructor(
    private readonly config: ConfigSource,
    private readonly topology: TopologyClient,
    readonly metrics: RedisEdgeMetrics,
    readonly tracer: Tracer,
    /** Session ids and the epoch (GET /sessions). */
    readonly admin: RedisAdmin,
  ) {}

  settings(): ConnectionSettings {
    return this.epoch().settings;
  }

  selector(): ShardSelector {
    return this.epoch().selector;
  }

  /** The shard's usable primary, or for the read-only listener a replica (the primary when none and fallback_to_primary). */
  backendFor(shard: string, listener: 'read_write' | 'read_only'): BackendTarget | Error {
    const view = this.topology.current();
    const primary = view.usable(shard, 'primary')[0];
    if (listener === 'read_write') return primary ? { name: primary.name, address: primary.connectAddress } : RedisEdgeErrors.noBackend('primary', shard);
    const replicas = view.usable(shard, 'replica');
    const name = replicas.length > 0 ? this.epoch().replicas.pick(replicas.map((r) => ({ name: r.name, weight: r.weight, inUse: this.load.get(r.name) ?? 0, waiters: 0, capacity: 1000 }))) : undefined;
    const replica = replicas.find((r) => r.name === name);
    if (replica) return { name: replica.name, address: replica.connectAddress };
    if (primary && this.config.current().config.redis.fallback_to_primary) return { name: primary.name, address: primary.connectAddress };
    return RedisEdgeErrors.noBackend('replica', shard);
  }

  opened(backend: string): void {
    this.load.set(backend, (this.load.get(backend) ?? 0) + 1);
  }

  /** Piped connections per backend (GET /pools). */
  connections(): ReadonlyMap<string, number> {
    return this.load;
  }

  closed(backend: string): void {
    this.load.set(backend, (this.load.get(backend) ?? 1) - 1);
  }

  private epoch(): NonNullable<ConnectionEdge['cached']> {
    const current = this.config.current();
    if (this.cached && this.snapshot === current) return this.cached;
    const c = current.config;
    this.snapshot = current;
    this.cached = {
      selector: new ShardSelector(c),
      settings: {
        queryBufferLimit: Math.min(c.redis.query_buffer_limit_bytes, 0x7fffffff),
        maxBulkBytes: Math.min(c.redis.max_bulk_bytes, 0x7fffffff),
        idleTimeoutMs: c.proxy.client_read_timeout_seconds * 1000,
        connectTimeoutMs: c.redis.connect_timeout_seconds * 1000,
      },
      replicas: this.cached?.replicas ?? new ReplicaSelector({ margin: c.redis.pressure_margin }),
    };
    return this.cached;
  }
}
