// The service lifecycle: load configuration, connect the bus, follow the configuration KV, start
// services with telemetry and admin HTTP, and drain them on shutdown within a deadline.
import { hostname } from 'node:os';
import type { RouteOptions } from 'fastify';
import { createBus, type Bus } from '@dbproxy/bus';
import { createSnapshot, loadConfigFile, processEnvironment, type ConfigIssue, type Environment } from '@dbproxy/config';
import { createLogger, MetricsRegistry, observeLibraryChannels, startTracing, type Logger, type Tracing } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import type { DestinationStream } from 'pino';
import { buildAdminServer, splitListen } from './admin-server';
import { ConfigFollower } from './config-follower';
import { startHeartbeats } from './heartbeat';
import { ServiceListeners } from './listeners';
import { Readiness } from './readiness';
import type { RunningService, ServiceContext, ServiceDefinition } from './service';

export interface RuntimeOptions {
  readonly services: readonly ServiceDefinition[];
  readonly configPath: string;
  readonly version: string;
  /** Every service in one process (`dbproxy start` naming none): shared admin port, label "dbproxy". */
  readonly allInOne?: boolean;
  readonly env?: Environment;
  /** Overrides the admin listener chosen from [proxy.admin] (tests use port 0). */
  readonly adminListen?: string;
  readonly logDestination?: DestinationStream;
}

export interface Runtime {
  readonly instanceId: string;
  readonly config: ConfigFollower;
  readonly bus: Bus;
  readonly readiness: Readiness;
  readonly logger: Logger;
  readonly metrics: MetricsRegistry;
  /** `host:port` the admin HTTP server listens on. */
  readonly adminAddress: string;
  /** Drains every service (deadline from proxy.shutdown_timeout_seconds) and closes everything. */
  stop(reason: string): Promise<void>;
}

/** The configuration file failed validation: exit code 2 with every issue. */
export class InvalidConfigFile extends Error {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(`invalid configuration (${issues.length} issue(s))`);
  }
}

function adminListenFor(opts: RuntimeOptions, admin: Readonly<Record<string, unknown>>): string {
  if (opts.adminListen) return opts.adminListen;
  const only = opts.services.length === 1 && !opts.allInOne ? opts.services[0] : undefined;
  return String(only ? admin[only.adminKey] : admin['listen']);
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const env = opts.env ?? processEnvironment();
  const loaded = loadConfigFile(opts.configPath, env);
  if (!loaded.ok) throw new InvalidConfigFile(loaded.issues);
  const fileConfig = loaded.config;
  const names = opts.services.map((s) => s.name);
  const serviceLabel = names.length === 1 && !opts.allInOne ? (names[0] as string) : 'dbproxy';
  const instanceId = fileConfig.proxy.instance_name ?? `${hostname()}-${process.pid}`;
  const logger = createLogger({ level: fileConfig.telemetry.log_level, service: serviceLabel, instance: instanceId, ...(opts.logDestination ? { destination: opts.logDestination } : {}) });
  const metrics = new MetricsRegistry({ service: serviceLabel });
  const unobserve = observeLibraryChannels(logger, metrics);
  const tracing: Tracing = startTracing({
    serviceName: serviceLabel,
    serviceNamespace: fileConfig.telemetry.service_namespace,
    instance: instanceId,
    sampleRatio: fileConfig.telemetry.sample_ratio,
    maxExportBatchSize: fileConfig.telemetry.max_export_batch_size,
    ...(fileConfig.telemetry.otlp_endpoint ? { endpoint: fileConfig.telemetry.otlp_endpoint } : {}),
  });
  const readiness = new Readiness();
  const config = new ConfigFollower(createSnapshot(0, fileConfig, loaded.document ?? {}), env, logger, readiness, metrics);

  const bus = createBus({ name: `${serviceLabel}-${instanceId}`, ...(fileConfig.bus.nats_url ? { natsUrl: fileConfig.bus.nats_url } : {}), connectTimeoutMs: fileConfig.bus.connect_timeout_seconds * 1000 });
  const trackBus = (status: string) => readiness.set('bus', status === 'connected' ? 'ready' : 'degraded', status === 'connected' ? undefined : `bus ${status}; serving the last good configuration and topology`);
  trackBus(bus.status());
  const untrackBus = bus.onStatus(trackBus);
  await bus.waitForConnection(fileConfig.bus.connect_timeout_seconds * 1000).catch((err) => logger.warn({ err: errorMessage(err) }, 'bus not reachable at start-up; continuing'));
  await config.follow(bus, { author: `seed:${serviceLabel}@${instanceId}`, firstValueTimeoutMs: fileConfig.bus.connect_timeout_seconds * 1000 });

  const routes: RouteOptions[] = [];
  const listeners: ServiceListeners[] = [];
  const running: RunningService[] = [];
  const started: ServiceDefinition[] = [];
  try {
    for (const definition of opts.services) {
      const serviceListeners = new ServiceListeners(definition.name, logger.child({ component: definition.name }), metrics);
      listeners.push(serviceListeners);
      const ctx: ServiceContext = {
        name: definition.name,
        instanceId,
        version: opts.version,
        config,
        local: fileConfig,
        env,
        bus,
        logger: logger.child({ component: definition.name }),
        metrics,
        tracer: tracing.tracer(definition.name),
        readiness: { set: (component, status, reason) => readiness.set(`${definition.name}/${component}`, status, reason) },
        addAdminRoute: (route) => routes.push(route),
        listen: (spec) => serviceListeners.listen(spec),
        activeConnections: () => serviceListeners.activeConnections(),
      };
      running.push(await definition.start(ctx));
      started.push(definition);
    }
  } catch (err) {
    logger.error({ err: errorMessage(err) }, 'service failed to start');
    await Promise.allSettled(running.map((s) => s.close()));
    await bus.close();
    throw err;
  }

  const admin = buildAdminServer({ readiness, metrics, requestTimeoutMs: fileConfig.proxy.admin.request_timeout_seconds * 1000, routes });
  const listen = splitListen(adminListenFor(opts, fileConfig.proxy.admin));
  const boundAddress = await admin.listen({ host: listen.host, port: listen.port });
  const adminAddress = boundAddress.replace(/^https?:\/\//, '');
  const stopHeartbeats = startHeartbeats({ bus, config, instanceId, version: opts.version, adminAddress, intervalMs: fileConfig.bus.heartbeat_interval_seconds * 1000, services: running });
  logger.info({ services: started.map((s) => s.name), admin: adminAddress, epoch: config.current().epoch, bus: bus.kind }, 'dbproxy started');

  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.info({ reason }, 'draining');
      readiness.set('shutdown', 'unready', `shutting down: ${reason}`);
      stopHeartbeats();
      const deadline = Date.now() + config.current().config.proxy.shutdown_timeout_seconds * 1000;
      await Promise.allSettled(listeners.map((l) => l.stopAccepting()));
      await Promise.allSettled(running.map((s) => s.drain?.(deadline)));
      const closed = await Promise.allSettled(running.map((s) => s.close()));
      closed.forEach((r, i) => r.status === 'rejected' && logger.error({ service: started[i]?.name, err: errorMessage(r.reason) }, 'service failed to close'));
      config.stop();
      untrackBus();
      await admin.close();
      await bus.close();
      await tracing.shutdown().catch(() => undefined);
      unobserve();
      logger.info({ reason }, 'stopped');
      logger.flush();
    })();
    return stopping;
  };
  return { instanceId, config, bus, readiness, logger, metrics, adminAddress, stop };
}
