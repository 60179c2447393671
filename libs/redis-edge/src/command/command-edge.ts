// What every command-mode session of a process shares: the command table, the route table, the
// backend connections, the tick flusher, settings of the configuration in force and telemetry.
import type { ConfigSnapshot, DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { Tracer } from '@opentelemetry/api';
import { tracerRecords, type Logger } from '@dbproxy/observability';
import { ReplicaSelector, type ReplicaCandidate } from '@dbproxy/routing';
import type { TopologyClient } from '@dbproxy/topology-client';
import type { RedisAdmin } from '../admin-sessions';
import type { ReplyCache } from '../cache/reply-cache';
import type { TickFlusher } from '../io/tick-flusher';
import type { RedisEdgeMetrics } from '../metrics';
import type { CommandTable } from './command-table';
import type { EndpointRoute, LinkDirectory } from './link-directory';
import { RouteTableBuilder, type RouteTable } from './route-table';

export interface EdgeSettings {
  readonly maxOutstanding: number;
  readonly queryBufferLimit: number;
  readonly maxBulkBytes: number;
  readonly maxSubscriptions: number;
  /** Client output buffered in the socket above which the session stops dispatching and reading pub/sub. */
  readonly clientOutputLimitBytes: number;
  /** Pub/sub messages written toward a client since its socket last took everything, above which its pub/sub connections stop reading. */
  readonly maxPendingPushes: number;
  readonly crossShardWrites: boolean;
  readonly fallbackToPrimary: boolean;
  /** proxy.client_read_timeout_seconds in ms: an idle client is closed (not while subscribed or blocked). */
  readonly idleTimeoutMs: number;
}

export function settingsOf(config: DeepReadonly<DbproxyConfig>): EdgeSettings {
  const r = config.redis;
  return {
    maxOutstanding: r.max_outstanding_replies,
    queryBufferLimit: Math.min(r.query_buffer_limit_bytes, 0x7fffffff),
    maxBulkBytes: Math.min(r.max_bulk_bytes, 0x7fffffff),
    maxSubscriptions: r.max_subscriptions,
    clientOutputLimitBytes: r.client_output_limit_bytes,
    maxPendingPushes: r.max_pending_pushes,
    crossShardWrites: r.cross_shard_writes,
    fallbackToPrimary: r.fallback_to_primary,
    idleTimeoutMs: config.proxy.client_read_timeout_seconds * 1000,
  };
}

export class CommandEdge {
  /** Undefined until COMMAND INFO/DOCS were read from a backend. */
  table: CommandTable | undefined;
  routes: RouteTable;
  settings: EdgeSettings;
  /** The GET/MGET reply cache ([redis.cache] enabled; src/cache), undefined when off. */
  cache: ReplyCache | undefined = undefined;
  /** A tracer provider is registered: sessions make a span per command (sampled ones get attributes). */
  readonly tracing: boolean;
  private config: DeepReadonly<DbproxyConfig>;
  private readonly builder: RouteTableBuilder;
  private readonly selector: ReplicaSelector;
  /** Read-only sessions placed on each replica by this process (the load the choice balances). */
  private readonly replicaLoad = new Map<string, number>();

  constructor(
    snapshot: ConfigSnapshot,
    readonly links: LinkDirectory,
    /** Backend writes: once per turn, so commands of many clients leave in one write per node. */
    readonly flusher: TickFlusher,
    /** Client writes: after each backend read (replies of one read leave together), else once per turn. */
    readonly replies: TickFlusher,
    readonly metrics: RedisEdgeMetrics,
    private readonly topology: TopologyClient,
    readonly logger: Logger,
    readonly tracer: Tracer,
    /** Session ids, pause gate and command count (GET /sessions, pause/resume). */
    readonly admin: RedisAdmin,
  ) {
    this.tracing = tracerRecords(tracer);
    this.config = snapshot.config;
    this.settings = settingsOf(snapshot.config);
    this.builder = new RouteTableBuilder(links);
    this.selector = new ReplicaSelector({ margin: snapshot.config.redis.pressure_margin });
    this.routes = this.builder.build(this.config, topology.current());
  }

  /** A new configuration epoch or topology snapshot: routes and settings follow at once. */
  rebuild(config?: DeepReadonly<DbproxyConfig>): void {
    if (config) {
      this.config = config;
      this.settings = settingsOf(config);
    }
    this.routes = this.builder.build(this.config, this.topology.current());
  }

  get cluster(): boolean {
    return this.routes.cluster;
  }

  /** MOVED: the slot is served by `address` from now on; topology is asked to catch up. */
  noteMoved(slot: number, address: string): EndpointRoute {
    const route = this.builder.endpointAt(this.config, this.topology.current(), address);
    if (this.routes.cluster) this.routes.slotRoutes[slot] = route;
    void this.topology.requestRefresh('moved', { slot, address });
    return route;
  }

  /** CLUSTERDOWN: the slot map may be changing (failover); topology is asked to look again. */
  async noteClusterDown(): Promise<void> {
    await this.topology.requestRefresh('connection-error');
  }

  /** The node at `address` (an ASK target, a node only a redirect named). */
  routeAt(address: string): EndpointRoute {
    return this.builder.endpointAt(this.config, this.topology.current(), address);
  }

  /** A replica of shard `index` for a read-only session (weighted, least loaded band), or the primary as fallback. */
  chooseReplica(index: number): EndpointRoute | undefined {
    const shard = this.routes.shards[index];
    if (!shard) return undefined;
    const candidates: ReplicaCandidate[] = shard.replicas.map((r) => ({ name: r.route.endpoint.key, weight: r.weight, inUse: this.replicaLoad.get(r.route.endpoint.key) ?? 0, waiters: 0, capacity: 1000 }));
    const key = candidates.length > 0 ? this.selector.pick(candidates) : undefined;
    const chosen = shard.replicas.find((r) => r.route.endpoint.key === key)?.route;
    if (chosen) {
      this.replicaLoad.set(chosen.endpoint.key, (this.replicaLoad.get(chosen.endpoint.key) ?? 0) + 1);
      return chosen;
    }
    return this.settings.fallbackToPrimary ? shard.primary : undefined;
  }

  /** A read-only session no longer uses `route`. */
  releaseReplica(route: EndpointRoute): void {
    const n = this.replicaLoad.get(route.endpoint.key);
    if (n !== undefined) this.replicaLoad.set(route.endpoint.key, n - 1);
  }
}
