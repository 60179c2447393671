// The service lifecycle: load configuration, connect the bus, follow the configuration KV, start
// services with telemetry and admin HTTP, and drain them on shutdown within a deadline.
import { hostname } from 'node:os';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { BusErrors, createBus, droppedMessageCounts, type Bus } from '@dbproxy/bus';
import { createSnapshot, loadConfigFile, processEnvironment, type ConfigIssue, type Environment } from '@dbproxy/config';
import { createLogger, MetricsRegistry, observeLibraryChannels, startTracing, zeroSeries, type Logger, type Tracing } from '@dbproxy/observability';
import { errorCode, errorMessage } from '@dbproxy/util';
import type { DestinationStream } from 'pino';
import { buildAdminServer, splitListen } from './admin-server';
import { busConnectOptions, insecureBusWarnings } from './bus-settings';
import { applyBusIdentities } from './bus-identity';
import { ConfigFollower } from './config-follower';
import { reloadConfigFile, type ReloadOutcome } from './config-reload';
import { edgeAdminRoutes, serveEdgeAdmin } from './edge-admin/admin-routes';
import { startHeartbeats } from './heartbeat';
import { Readiness } from './readiness';
import type { RunningService, ServiceDefinition } from './service';
import { ServiceHost, type HostShared } from './service-host';
import { closeBounded, drainAndClose, type DrainTarget, type ShutdownReport } from './shutdown';
import { abandonStart, StartupFailed } from './start-failure';
import { WorkerEndpoint } from './workers/worker-endpoint';
import { WORKER_LABEL_ENV, type WorkerGroup, type WorkerLauncher } from './workers/worker-group';

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
  /** How to fork worker processes for services configured with several workers. */
  readonly workerLauncher?: WorkerLauncher;
  /** This process is a worker of an edge's primary: no admin HTTP or heartbeats; sockets arrive over IPC. */
  readonly worker?: boolean;
}

/** This process's metrics, summed with every worker's (prom-client's cluster aggregation). */
async function aggregatedMetrics(metrics: MetricsRegistry, hosts: readonly ServiceHost[]): Promise<{ contentType: string; body: string }> {
  const groups = hosts.flatMap((h) => (h.workers ? [h.workers] : []));
  if (groups.length === 0) return metrics.exposition();
  const workers = (await Promise.all(groups.map((g) => g.gather('metrics')))).flat() as MetricObjectWithValues<MetricValue<string>>[][];
  const registry = AggregatorRegistry.aggregate([await metrics.registry.getMetricsAsJSON(), ...workers]);
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** Exits once the log lines written so far are out (or after a short wait if flushing stalls). */
export function exitAfterFlush(logger: Logger, code: number): void {
  setTimeout(() => process.exit(code), 500).unref();
  logger.flush(() => process.exit(code));
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
  /**
   * Drains every service until proxy.shutdown_timeout_seconds, closes them within a fixed grace
   * (services that overran are named in the log and abandoned) and closes what the runtime owns;
   * says whether that was clean. Calling it again returns the same report.
   */
  shutdown(reason: string): Promise<ShutdownReport>;
  /** `shutdown` for callers that only wait for it. */
  stop(reason: string): Promise<void>;
  /** SIGHUP: re-reads the --config file as a new epoch (embedded bus), or logs that it is ignored (NATS, workers). */
  reload(): Promise<ReloadOutcome>;
}

/** The configuration file failed validation: exit code 2 with every issue. */
export class InvalidConfigFile extends Error {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(`invalid configuration (${issues.length} issue(s))`);
  }
}

/** NATS away at start: serve on the file (fail static). NATS refusing our credentials or TLS: stop. */
async function waitForBus(bus: Bus, timeoutMs: number, logger: Logger): Promise<void> {
  try {
    await bus.waitForConnection(timeoutMs);
  } catch (err) {
    const code = errorCode(err);
    if (code !== BusErrors.authRefused.code && code !== BusErrors.tlsFailed.code) return void logger.warn({ err: errorMessage(err) }, 'bus not reachable at start-up; continuing');
    logger.error({ err: errorMessage(err), code }, 'bus connection refused; stopping');
    await closeBounded('bus', () => bus.close(), logger);
    throw err;
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
  // a worker reports under its primary's label: one /metrics, one service
  const inherited = opts.worker ? env[WORKER_LABEL_ENV] : undefined;
  const serviceLabel = inherited || (names.length === 1 && !opts.allInOne ? (names[0] as string) : 'dbproxy');
  const instanceId = fileConfig.proxy.instance_name ?? `${hostname()}-${process.pid}`;
  const logger = createLogger({ level: fileConfig.telemetry.log_level, service: serviceLabel, instance: instanceId, ...(opts.logDestination ? { destination: opts.logDestination } : {}) });
  const metrics = new MetricsRegistry({ service: serviceLabel });
  // read per line: a later epoch's limit applies (config is assigned below, before any service starts)
  let rateLimit = () => fileConfig.telemetry.log_rate_limit_per_second;
  const unobserve = observeLibraryChannels(logger, metrics, { logRateLimitPerSecond: () => rateLimit() });
  zeroSeries(metrics.counter({ name: 'dbproxy_bus_messages_dropped_total', help: 'Bus messages dropped: malformed, failed handler or undeliverable', labelNames: ['reason'] }), { reason: Object.keys(droppedMessageCounts()) });
  const tracing: Tracing = startTracing({
    serviceName: serviceLabel,
    serviceNamespace: fileConfig.telemetry.service_namespace,
    instance: instanceId,
    sampleRatio: fileConfig.telemetry.sample_ratio,
    maxExportBatchSize: fileConfig.telemetry.max_export_batch_size,
    exportDelayMs: fileConfig.telemetry.export_delay_ms,
    protocol: fileConfig.telemetry.otlp_protocol,
    ...(fileConfig.telemetry.otlp_endpoint ? { endpoint: fileConfig.telemetry.otlp_endpoint } : {}),
  });
  const readiness = new Readiness();
  const config = new ConfigFollower(createSnapshot(0, fileConfig, loaded.document ?? {}), env, logger, readiness, metrics);
  rateLimit = () => config.current().config.telemetry.log_rate_limit_per_second;

  for (const exposure of insecureBusWarnings(fileConfig.bus)) logger.warn({ nats_url: fileConfig.bus.nats_url }, `bus.insecure = true: ${exposure}`);
  const bus = createBus({ name: `${serviceLabel}-${instanceId}`, ...busConnectOptions(fileConfig.bus) });
  try {
    applyBusIdentities(bus, fileConfig, names, logger);
  } catch (err) {
    await bus.close();
    throw err;
  }
  const trackBus = (status: string) => readiness.set('bus', status === 'connected' ? 'ready' : 'degraded', status === 'connected' ? undefined : `bus ${status}; serving the last good configuration and topology`);
  trackBus(bus.status());
  const untrackBus = bus.onStatus(trackBus);
  await waitForBus(bus, fileConfig.bus.connect_timeout_seconds * 1000, logger);
  await config.follow(bus, { author: `seed:${serviceLabel}@${instanceId}`, firstValueTimeoutMs: fileConfig.bus.connect_timeout_seconds * 1000 });

  const routes: RouteOptions[] = [];
  const endpoint = opts.worker ? new WorkerEndpoint((deadline) => void shutdown(`drain requested by the primary (deadline ${new Date(deadline).toISOString()})`).then((report) => exitAfterFlush(logger, report.clean ? 0 : 1))) : undefined;
  const shared: HostShared = {
    instanceId,
    serviceLabel,
    version: opts.version,
    config,
    local: fileConfig,
    env,
    bus,
    logger,
    metrics,
    readiness,
    routes,
    tracer: (name) => tracing.tracer(name),
    ...(endpoint ? { endpoint } : {}),
    ...(opts.workerLauncher ? { launcher: opts.workerLauncher } : {}),
  };
  const hosts = opts.services.map((definition) => new ServiceHost(definition, shared));
  let admin: FastifyInstance | undefined;
  let adminAddress = '';
  let starting = 'services';
  try {
    for (const host of hosts) {
      starting = host.definition.name;
      await host.start();
    }
    if (!endpoint) {
      starting = 'admin HTTP';
      const admins = hosts.flatMap((h) => (h.running?.edgeAdmin ? [h.running.edgeAdmin] : []));
      if (admins.length > 0) routes.push(...edgeAdminRoutes(admins));
      const metricsText = () => aggregatedMetrics(metrics, hosts);
      admin = buildAdminServer({ readiness, metricsText, requestTimeoutMs: fileConfig.proxy.admin.request_timeout_seconds * 1000, routes });
      const listen = splitListen(adminListenFor(opts, fileConfig.proxy.admin));
      adminAddress = (await admin.listen({ host: listen.host, port: listen.port })).replace(/^https?:\/\//, '');
    }
  } catch (err) {
    const failure = new StartupFailed(starting, err);
    await abandonStart(failure, { hosts, admin, config, bus, tracing, logger, unobserve });
    untrackBus();
    throw failure;
  }
  const running = hosts.map((h) => h.running as RunningService);

  let stopHeartbeats = () => undefined as void;
  let edgeAdminServed: { unsubscribe(): void }[] = [];
  if (endpoint) {
    endpoint.provide('metrics', () => metrics.registry.getMetricsAsJSON());
    endpoint.ready();
  } else {
    const admins = running.flatMap((r) => (r.edgeAdmin ? [r.edgeAdmin] : []));
    if (admins.length > 0) edgeAdminServed = serveEdgeAdmin(bus, instanceId, admins);
    stopHeartbeats = startHeartbeats({ bus, config, instanceId, version: opts.version, adminAddress, intervalMs: fileConfig.bus.heartbeat_interval_seconds * 1000, services: running });
  }
  logger.info({ services: names, admin: adminAddress || undefined, worker: opts.worker === true, epoch: config.current().epoch, bus: bus.kind }, opts.worker ? 'worker started' : 'dbproxy started');

  const targets: DrainTarget[] = hosts.map((host, i) => ({
    name: host.definition.name,
    service: running[i] as RunningService,
    ...(host.workers ? { drainWorkers: (deadline: number) => (host.workers as WorkerGroup).drain(deadline) } : {}),
    destroyConnections: () => host.listeners.destroyConnections(),
  }));
  let stopping: Promise<ShutdownReport> | undefined;
  const shutdown = (reason: string): Promise<ShutdownReport> => {
    stopping ??= (async () => {
      logger.info({ reason }, 'draining');
      readiness.set('shutdown', 'unready', `shutting down: ${reason}`);
      stopHeartbeats();
      for (const served of edgeAdminServed) served.unsubscribe();
      const deadline = Date.now() + config.current().config.proxy.shutdown_timeout_seconds * 1000;
      for (const host of hosts) host.listeners.stopAccepting();
      const report = await drainAndClose(targets, deadline, logger);
      config.stop();
      untrackBus();
      await closeBounded('admin HTTP', () => admin?.close(), logger);
      await closeBounded('bus', () => bus.close(), logger);
      await closeBounded('trace export', () => tracing.shutdown(), logger);
      unobserve();
      logger.info({ reason, clean: report.clean, ...(report.clean ? {} : { overran: report.overran, failed: report.failed }) }, 'stopped');
      logger.flush();
      return report;
    })();
    return stopping;
  };
  const stop = async (reason: string): Promise<void> => void (await shutdown(reason));
  const reload = () => reloadConfigFile({ configPath: opts.configPath, env, bus, config, logger, author: `sighup:${serviceLabel}@${instanceId}`, worker: opts.worker === true });
  return { instanceId, config, bus, readiness, logger, metrics, adminAddress, shutdown, stop, reload };
}
