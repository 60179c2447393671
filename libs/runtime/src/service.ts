// What a service is to the runtime: a definition that starts it, and a handle that drains it.
import type { RouteOptions } from 'fastify';
import type { Tracer } from '@opentelemetry/api';
import type { Bus, Protocol } from '@dbproxy/bus';
import type { DbproxyConfig, DeepReadonly, Environment } from '@dbproxy/config';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import type { ConfigSource } from './config-follower';
import type { BoundListener, ListenerSpec } from './listeners';
import type { ComponentStatus } from './readiness';
import type { EdgeAdmin } from './edge-admin/edge-admin';

export type ServiceName = 'config-api' | 'topology' | 'mysql-edge' | 'pg-edge' | 'redis-edge' | 'bgd-monitor' | 'xa-coordinator';

/** Keys of [proxy.admin] naming each service's own admin listener. */
export type AdminKey = 'config_api' | 'topology' | 'mysql_edge' | 'pg_edge' | 'redis_edge' | 'bgd_monitor' | 'xa_coordinator';

export interface ServiceReadiness {
  /** Sets `<service>/<component>`'s state on /readyz. */
  set(component: string, status: ComponentStatus, reason?: string): void;
}

export interface ServiceContext {
  readonly name: ServiceName;
  readonly instanceId: string;
  readonly version: string;
  readonly config: ConfigSource;
  /**
   * The --config file as loaded at start. Listener addresses, [proxy.admin], [bus] and
   * [telemetry] are bound from it: they belong to this process, and a change to them in a
   * later epoch applies when the process restarts.
   */
  readonly local: DeepReadonly<DbproxyConfig>;
  /** The environment `${VAR}` placeholders expand from. */
  readonly env: Environment;
  readonly bus: Bus;
  readonly logger: Logger;
  readonly metrics: MetricsRegistry;
  readonly tracer: Tracer;
  readonly readiness: ServiceReadiness;
  /** Adds a route to the admin HTTP server (only during start). */
  addAdminRoute(route: RouteOptions): void;
  /**
   * Opens a protocol listener with admission control. Sockets reach `spec.onConnection` in the
   * process that serves them; the runtime stops accepting before the service's drain.
   */
  listen(spec: ListenerSpec): Promise<BoundListener>;
  /** Connections admitted by this service's listeners and still open. */
  activeConnections(): number;
  /**
   * False in a primary that hands every connection to worker processes: its pools and sessions
   * stay empty, so figures about them (pool gauges) come from the workers alone.
   */
  readonly servesConnections: boolean;
  /** Registers what this process answers for `topic` (e.g. pool figures for an admin route). */
  provide(topic: string, provider: (arg?: unknown) => unknown): void;
  /**
   * The answers for `topic` from every process serving this service (its workers, or itself);
   * `arg` goes to each provider; a worker that does not answer within `timeoutMs` is left out.
   */
  gather(topic: string, arg?: unknown, timeoutMs?: number): Promise<unknown[]>;
}

export interface EdgeStatus {
  readonly protocol: Protocol;
  readonly sessions: number;
}

export interface RunningService {
  /** Stop accepting new work and let sessions finish until `deadline` (ms since epoch). */
  drain?(deadline: number): Promise<void>;
  /** Close whatever is left: sessions, pools, subscriptions. */
  close(): Promise<void>;
  /** Edges report their sessions in heartbeats (config-api's GET /v1/edges). */
  edgeStatus?(): EdgeStatus;
  /** Edges: sessions, pools, kill, pause and resume over all their processes (GET /sessions, the admin subject). */
  readonly edgeAdmin?: EdgeAdmin;
}

export interface ServiceDefinition {
  readonly name: ServiceName;
  readonly adminKey: AdminKey;
  /** Processes serving the service's connections (0 = one per CPU); absent = this process only. */
  workers?(config: DeepReadonly<DbproxyConfig>): number;
  start(ctx: ServiceContext): Promise<RunningService>;
}
