// The topology service: health checks of every configured backend, snapshots per protocol on the
// bus (+ KV), refresh requests from edges, and blue/green actions applied to the snapshots.
import { KvRecords, openRecords, serveMessages, subscribeMessages, Subjects, type Protocol, type Subscription, type TopologySnapshot } from '@dbproxy/bus';
import { snakeCaseKeys, type RunningService, type ServiceContext, type ServiceDefinition } from '@dbproxy/runtime';
import { errorMessage } from '@dbproxy/util';
import { TopologyMetrics } from './metrics';
import { ProtocolMonitor } from './protocol-monitor';
import { ReadOnlySuppression } from './snapshot/bgd-suppression';
import { SnapshotPublisher } from './snapshot/snapshot-publisher';
import { PROTOCOLS } from './targets';

type TopologyStore = Awaited<ReturnType<typeof openRecords<string, (typeof KvRecords)['topology']['schema']>>>;

/** Opens KV `dbproxy-topology`; undefined when NATS is away at start (snapshots still go out on the subject). */
async function openStore(ctx: ServiceContext): Promise<TopologyStore | undefined> {
  try {
    return await openRecords(ctx.bus, KvRecords.topology);
  } catch (err) {
    ctx.logger.warn({ err: errorMessage(err) }, 'topology KV not available; snapshots go out on the subject only until it is');
    return undefined;
  }
}

/** The snapshots published before this process started, read within the bus connect timeout. */
async function previousSnapshots(ctx: ServiceContext, store: TopologyStore | undefined): Promise<Map<Protocol, TopologySnapshot>> {
  const found = new Map<Protocol, TopologySnapshot>();
  if (!store || ctx.bus.status() !== 'connected') return found;
  const reads = PROTOCOLS.map(async (protocol) => {
    const record = await store.get({ protocol }).catch(() => undefined);
    if (record?.value) found.set(protocol, record.value);
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ctx.local.bus.connect_timeout_seconds * 1000)));
  await Promise.race([Promise.all(reads), timeout]);
  clearTimeout(timer);
  return found;
}

function createMonitors(
  ctx: ServiceContext,
  metrics: TopologyMetrics,
  store: TopologyStore | undefined,
  previous: Map<Protocol, TopologySnapshot>,
  suppression: ReadOnlySuppression,
): Map<Protocol, ProtocolMonitor> {
  const monitors = new Map<Protocol, ProtocolMonitor>();
  for (const protocol of PROTOCOLS) {
    const publisher = new SnapshotPublisher(ctx.bus, protocol, {
      published: (snapshot, trigger) => metrics.published(snapshot, trigger),
      kvFailed: (err) => ctx.logger.debug({ protocol, err: errorMessage(err) }, 'topology KV write failed; retried at the next re-publish'),
    });
    if (store) publisher.attach(store);
    const monitor = new ProtocolMonitor({ protocol, bus: ctx.bus, config: ctx.config, publisher, metrics, logger: ctx.logger, suppression, tracer: ctx.tracer });
    const last = previous.get(protocol);
    if (last) monitor.seed(last);
    monitors.set(protocol, monitor);
    metrics.monitoring(protocol);
  }
  return monitors;
}

/** Blue/green actions go to every protocol's monitor; each applies what concerns its backends. */
function followBgdActions(ctx: ServiceContext, metrics: TopologyMetrics, monitors: Map<Protocol, ProtocolMonitor>): Subscription {
  return subscribeMessages(ctx.bus, Subjects.bgdActions.pattern(), (action) => {
    let applied = false;
    for (const monitor of monitors.values()) applied = monitor.applyAction(action) || applied;
    metrics.bgdAction(action, applied);
    ctx.logger.info({ action: action.action, deployment: action.deployment, actionId: action.actionId, applied }, 'blue/green action received');
  });
}

/** Phase changes of every deployment: read-only suppression starts and ends with the active writer phases. */
function followBgdStates(ctx: ServiceContext, suppression: ReadOnlySuppression): Subscription {
  return subscribeMessages(ctx.bus, Subjects.bgdState.pattern(), (state) => {
    if (suppression.follow(state, ctx.config.current().config)) ctx.logger.info({ deployment: state.deployment, phase: state.phase, suppressed: suppression.describe() }, 'blue/green read-only suppression changed');
  });
}

function serveRefreshRequests(ctx: ServiceContext, monitors: Map<Protocol, ProtocolMonitor>): Subscription {
  return serveMessages(ctx.bus, Subjects.topologyRefresh.pattern(), async (request, meta) => {
    const monitor = monitors.get(meta.params.protocol as Protocol);
    if (!monitor) throw new Error(`unknown protocol ${meta.params.protocol}`);
    return monitor.refresh(request);
  });
}

/** Maps in GET /topology keyed by backend, shard, host or deployment names: their keys are data. */
const DATA_KEYED = new Set(['draining', 'dns_pins', 'moved_writers', 'read_only_suppression']);
const adminJson = (body: unknown) => snakeCaseKeys(body, DATA_KEYED);

function addAdminRoutes(ctx: ServiceContext, monitors: Map<Protocol, ProtocolMonitor>): void {
  ctx.addAdminRoute({ method: 'GET', url: '/topology', handler: async () => adminJson({ protocols: [...monitors.values()].map((m) => m.describe()) }) });
  ctx.addAdminRoute({
    method: 'GET',
    url: '/topology/:protocol',
    handler: async (req, reply) => {
      const monitor = monitors.get((req.params as { protocol: string }).protocol as Protocol);
      return monitor ? adminJson(monitor.describe()) : reply.code(404).send({ error: 'unknown protocol' });
    },
  });
}

export const topologyService: ServiceDefinition = {
  name: 'topology',
  adminKey: 'topology',
  async start(ctx: ServiceContext): Promise<RunningService> {
    const store = await openStore(ctx);
    const metrics = new TopologyMetrics(ctx.metrics);
    const suppression = new ReadOnlySuppression();
    const monitors = createMonitors(ctx, metrics, store, await previousSnapshots(ctx, store), suppression);
    const subs = [followBgdActions(ctx, metrics, monitors), followBgdStates(ctx, suppression), serveRefreshRequests(ctx, monitors)];
    const unfollow = ctx.config.onChange(() => {
      suppression.reconfigure(ctx.config.current().config);
      for (const monitor of monitors.values()) monitor.reconfigure();
    });
    addAdminRoutes(ctx, monitors);
    ctx.readiness.set('checks', 'unready', 'first health checks running');
    void Promise.allSettled([...monitors.values()].map((m) => m.start())).then(() => ctx.readiness.set('checks', 'ready'));
    return {
      async close() {
        unfollow();
        for (const s of subs) s.unsubscribe();
        for (const monitor of monitors.values()) monitor.stop();
      },
    };
  },
};
