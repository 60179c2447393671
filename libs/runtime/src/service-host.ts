// Hosts one service in this process: builds its context, and — for an edge configured with
// several worker processes — forks the workers that serve its connections.
import type { RouteOptions } from 'fastify';
import type { Tracer } from '@opentelemetry/api';
import type { Bus } from '@dbproxy/bus';
import type { DbproxyConfig, DeepReadonly, Environment } from '@dbproxy/config';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import type { ConfigFollower } from './config-follower';
import { ServiceListeners } from './listeners';
import { InboundProxyGate, proxyProtocolSettings } from './proxy-protocol/inbound-gate';
import type { Readiness } from './readiness';
import type { RunningService, ServiceContext, ServiceDefinition } from './service';
import type { WorkerEndpoint } from './workers/worker-endpoint';
import { usableCpus } from './workers/cpu-quota';
import { WorkerGroup, type WorkerLauncher } from './workers/worker-group';

export interface HostShared {
  readonly instanceId: string;
  /** The process's service label (metrics, logs, traces); workers take their primary's. */
  readonly serviceLabel: string;
  readonly version: string;
  readonly config: ConfigFollower;
  readonly local: DeepReadonly<DbproxyConfig>;
  readonly env: Environment;
  readonly bus: Bus;
  readonly logger: Logger;
  readonly metrics: MetricsRegistry;
  readonly readiness: Readiness;
  readonly routes: RouteOptions[];
  tracer(name: string): Tracer;
  /** Set in a worker process: sockets and gather requests come from the primary. */
  readonly endpoint?: WorkerEndpoint;
  /** Set in a primary that may fork workers. */
  readonly launcher?: WorkerLauncher;
}

/**
 * Worker processes a service asks for: its configured count, 0 meaning one per CPU the process may
 * use (the container's cgroup CPU quota when it is lower than the CPUs it sees). Workers
 * follow configuration and topology over the bus, so the in-process (embedded) bus, which a
 * forked process cannot share, means one process.
 */
export function workerCount(definition: ServiceDefinition, config: DeepReadonly<DbproxyConfig>): number {
  const configured = definition.workers?.(config) ?? 1;
  if (!config.bus.nats_url) return 1;
  return configured === 0 ? usableCpus() : configured;
}

export class ServiceHost {
  readonly listeners: ServiceListeners;
  private group: WorkerGroup | undefined;
  private readonly providers = new Map<string, (arg?: unknown) => unknown>();
  running: RunningService | undefined;

  constructor(
    readonly definition: ServiceDefinition,
    private readonly shared: HostShared,
  ) {
    const logger = shared.logger.child({ component: definition.name });
    const proxyGate = new InboundProxyGate(definition.name, () => proxyProtocolSettings(shared.config.current().config), logger, shared.metrics);
    this.listeners = new ServiceListeners(definition.name, logger, shared.metrics, proxyGate);
    if (shared.endpoint) this.listeners.receiveFrom(shared.endpoint);
  }

  get workers(): WorkerGroup | undefined {
    return this.group;
  }

  async start(): Promise<RunningService> {
    const count = this.shared.endpoint ? 1 : workerCount(this.definition, this.shared.local);
    if (count > 1 && this.shared.launcher) {
      this.group = new WorkerGroup(this.definition.name, count, this.shared.launcher, this.shared.logger, this.shared.serviceLabel, (listener, n) => this.listeners.released(listener, n));
      await this.group.start(60_000);
      this.listeners.dispatchTo(this.group);
    }
    this.running = await this.definition.start(this.context());
    return this.running;
  }

  /** What every process of this service answers for `topic` (this one, or its workers). */
  async gather(topic: string, arg?: unknown, timeoutMs?: number): Promise<unknown[]> {
    if (this.group) return this.group.gather(topic, timeoutMs, arg);
    const provider = this.providers.get(topic);
    return provider ? [await provider(arg)] : [];
  }

  private context(): ServiceContext {
    const { definition, shared } = this;
    const name = definition.name;
    return {
      name,
      instanceId: shared.instanceId,
      version: shared.version,
      config: shared.config,
      local: shared.local,
      env: shared.env,
      bus: shared.bus,
      logger: shared.logger.child({ component: name }),
      metrics: shared.metrics,
      tracer: shared.tracer(name),
      readiness: { set: (component, status, reason) => shared.readiness.set(`${name}/${component}`, status, reason) },
      addAdminRoute: (route) => shared.routes.push(route),
      listen: (spec) => this.listeners.listen(spec),
      activeConnections: () => this.listeners.activeConnections(),
      servesConnections: this.group === undefined,
      provide: (topic, provider) => {
        this.providers.set(topic, provider);
        shared.endpoint?.provide(`${name}:${topic}`, provider);
      },
      gather: (topic, arg, timeoutMs) => (this.group ? this.group.gather(`${name}:${topic}`, timeoutMs, arg) : this.gather(topic, arg)),
    };
  }
}
