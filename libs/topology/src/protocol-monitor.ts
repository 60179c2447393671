// Watches every backend of one protocol: check rounds every health interval, lag against the
// primary's position timeline, health reports, and a snapshot published on change and re-published
// periodically; Redis Cluster slot maps on an interval and on demand.
import { publishMessage, Subjects, type BgdAction, type Bus, type Protocol, type TopologyRefreshRequest, type TopologySnapshot } from '@dbproxy/bus';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import type { Tracer } from '@opentelemetry/api';
import type { ConfigSource } from '@dbproxy/runtime';
import { errorMessage, publishOperationalEvent } from '@dbproxy/util';
import { testHostAddress } from '@dbproxy/topology-client';
import { CheckRoundSpan } from './checks/check-spans';
import { createProbe } from './checks/probes';
import type { BackendProbe, CheckResult } from './checks/types';
import { ClusterTracker } from './cluster/cluster-tracker';
import { CoalescedTask } from './coalesced-task';
import { BackendHealth } from './health/backend-health';
import { PositionTimeline } from './health/position-timeline';
import type { TopologyMetrics } from './metrics';
import { BgdOverlay, type Placement } from './snapshot/bgd-overlay';
import type { ReadOnlySuppression } from './snapshot/bgd-suppression';
import { buildShards } from './snapshot/snapshot-builder';
import type { PublishTrigger, SnapshotPublisher } from './snapshot/snapshot-publisher';
import { configuredTargets, connectionKey, type BackendTarget } from './targets';

export interface MonitorContext {
  readonly protocol: Protocol;
  readonly bus: Bus;
  readonly config: ConfigSource;
  readonly publisher: SnapshotPublisher;
  readonly metrics: TopologyMetrics;
  readonly logger: Logger;
  /** Blue/green read-only suppression, shared by every protocol's monitor. */
  readonly suppression?: ReadOnlySuppression;
  /** Health check spans (checks/check-spans.ts); absent: none. */
  readonly tracer?: Tracer;
}

type Config = DeepReadonly<DbproxyConfig>;
const MAX_POSITION_CHARS = 65_536;

export class ProtocolMonitor {
  readonly overlay = new BgdOverlay();
  private configured: BackendTarget[];
  private readonly cluster: ClusterTracker | undefined;
  private readonly probes = new Map<string, { key: string; probe: BackendProbe }>();
  private readonly health = new Map<string, BackendHealth>();
  private readonly timelines = new Map<string, { primary: string; timeline: PositionTimeline }>();
  private readonly rounds: CoalescedTask;
  private readonly slots: CoalescedTask;
  private readonly timers = new Set<NodeJS.Timeout>();
  private firstRound: Promise<void> | undefined;
  private checkedOnce = false;
  private stopped = false;

  constructor(private readonly ctx: MonitorContext) {
    this.configured = configuredTargets(this.settings(), ctx.protocol);
    this.cluster = ctx.protocol === 'redis' ? new ClusterTracker(ctx.config) : undefined;
    const debounce = () => this.settings().topology.refresh_debounce_ms;
    this.rounds = new CoalescedTask(() => this.round(), debounce);
    this.slots = new CoalescedTask(() => this.refreshSlots(), debounce);
  }

  /** Starts the loops; resolves once the first round has published the first snapshot. */
  start(): Promise<void> {
    this.firstRound = (async () => {
      if (this.cluster?.enabled()) await this.slots.request().catch(() => undefined);
      await this.rounds.request();
    })();
    void this.firstRound.finally(() => {
      this.every(() => this.settings().health.interval_seconds, () => this.rounds.request());
      this.every(() => this.settings().topology.republish_interval_seconds, async () => this.ctx.publisher.republish());
      this.every(() => this.settings().topology.redis_slot_refresh_seconds, () => (this.cluster?.enabled() ? this.slots.request() : Promise.resolve()));
    });
    return this.firstRound;
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.rounds.stop();
    this.slots.stop();
    for (const { probe } of this.probes.values()) probe.close();
    this.probes.clear();
  }

  /** A new configuration epoch: new targets, thresholds and credentials, checked at once. */
  reconfigure(): void {
    this.configured = configuredTargets(this.settings(), this.ctx.protocol);
    void (async () => {
      if (this.cluster) await this.slots.request();
      await this.rounds.request();
    })().catch((err) => this.ctx.logger.warn({ protocol: this.ctx.protocol, err: errorMessage(err) }, 'checks after a configuration change failed'));
  }

  /** An edge asks for a fresh view (after a MOVED or a connection error): the reply follows a new check round. */
  async refresh(request: TopologyRefreshRequest): Promise<TopologySnapshot> {
    this.ctx.metrics.refreshRequested(this.ctx.protocol, request.reason);
    this.ctx.publisher.observe(request.knownGeneration);
    if (this.cluster?.enabled()) await this.slots.request().catch(() => undefined);
    await this.rounds.request().catch(() => undefined);
    await this.firstRound;
    const current = this.ctx.publisher.current();
    return current && current.generation >= request.knownGeneration ? current : this.publish('refresh', true);
  }

  /** Applies a blue/green action; publishes at once when it changed the topology. */
  applyAction(action: BgdAction): boolean {
    const changed = this.overlay.apply(action, this.targets(), Date.now());
    if (changed && this.checkedOnce) this.publish('change');
    return changed;
  }

  /** Seeds the generation and the blue/green state from the snapshot published before a restart. */
  seed(previous: TopologySnapshot): void {
    this.ctx.publisher.observe(previous.generation);
    this.overlay.seed(previous, this.configured);
  }

  describe(): Record<string, unknown> {
    const targets = this.targets();
    const placements = this.overlay.place(targets, Date.now());
    return {
      protocol: this.ctx.protocol,
      snapshot: this.ctx.publisher.current() ?? null,
      overlay: this.overlay.describe(),
      readOnlySuppression: this.ctx.suppression?.describe() ?? {},
      cluster: this.cluster?.current() ?? null,
      backends: targets.map((t) => describeBackend(t, placements.get(t.name), this.health.get(t.name))),
    };
  }

  private settings(): Config {
    return this.ctx.config.current().config;
  }

  private targets(): BackendTarget[] {
    return [...this.configured, ...(this.cluster?.targets() ?? [])];
  }

  /** Runs `task` every `seconds()` (re-read each time) from the start of the previous run, never two at once. */
  private every(seconds: () => number, task: () => Promise<void>, delayMs = seconds() * 1000): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const started = Date.now();
      task()
        .catch((err) => this.ctx.logger.warn({ protocol: this.ctx.protocol, err: errorMessage(err) }, 'topology task failed'))
        .finally(() => this.every(seconds, task, Math.max(0, seconds() * 1000 - (Date.now() - started))));
    }, delayMs);
    this.timers.add(timer);
  }

  private async round(): Promise<void> {
    const config = this.settings();
    const targets = this.targets();
    this.prune(targets);
    const placements = this.overlay.place(targets, Date.now());
    const timeoutMs = config.health.timeout_seconds * 1000;
    const spans = CheckRoundSpan.start(this.ctx.tracer, this.ctx.protocol);
    const results = await Promise.all(
      targets.map(async (t) => {
        const placement = placements.get(t.name) as Placement;
        const probe = this.probeFor(t, placement);
        const result = spans === null ? await probe.check(timeoutMs) : await spans.check(t, placement.connectAddress, () => probe.check(timeoutMs));
        return { target: t, placement, result };
      }),
    );
    spans?.end();
    if (this.stopped) return;
    const live = new Set(this.targets().map((t) => t.name));
    this.record(
      results.filter((r) => live.has(r.target.name)),
      config,
    );
    this.checkedOnce = true;
    this.publish('change');
  }

  private record(results: readonly { target: BackendTarget; placement: Placement; result: CheckResult }[], config: Config): void {
    const thresholds = { failuresBeforeDown: config.health.failures_before_down, successesBeforeUp: config.health.successes_before_up };
    for (const { target, placement, result } of results) {
      const health = this.healthOf(target.name);
      const before = { state: health.health, error: health.last?.error ?? null };
      health.record(result, thresholds);
      if (health.health !== before.state) announceHealth(this.ctx.protocol, target, placement, health.up, health.up ? before.error : (result.error ?? 'check failed'));
      if (placement.role === 'primary' && result.ok && result.progress !== null) this.timelineOf(placement.shard, target.name).record(result.progress, result.checkedAt);
    }
    for (const { target, placement, result } of results) {
      const health = this.healthOf(target.name);
      // Revalidated as the result is applied: a check admitted before suppression began must not move placement.
      if (this.ctx.suppression?.suppressed(target.address)) this.ctx.metrics.suppressed(this.ctx.protocol, target.name);
      else health.judge(placement.role, this.timelines.get(placement.shard)?.timeline, target.maxLagSeconds);
      this.ctx.metrics.checked(this.ctx.protocol, target.name, placement.shard, placement.role, result, health);
      this.report(target, placement, health, result);
    }
  }

  private report(target: BackendTarget, placement: Placement, health: BackendHealth, result: CheckResult): void {
    const { bus, protocol } = this.ctx;
    if (bus.status() !== 'connected') return; // reports are momentary; snapshots carry the state across an outage
    const position = result.position !== null && result.position.length <= MAX_POSITION_CHARS ? result.position : null;
    publishMessage(bus, Subjects.health, { protocol, backend: target.name }, {
      protocol,
      backend: target.name,
      up: health.up,
      latencyMs: result.latencyMs,
      lagSeconds: placement.role === 'replica' ? health.lagVerdict.lagSeconds : null,
      position,
      roleObserved: result.roleObserved,
      checkedAt: new Date(result.checkedAt).toISOString(),
      ...(result.error ? { error: result.error } : {}),
    });
  }

  private publish(trigger: PublishTrigger, force = false): TopologySnapshot {
    const targets = this.targets();
    const placements = this.overlay.place(targets, Date.now());
    const shards = buildShards(targets, placements, this.health, this.cluster?.slotRanges() ?? new Map());
    return this.ctx.publisher.offer(this.ctx.config.current().epoch, shards, trigger, force);
  }

  private async refreshSlots(): Promise<void> {
    if (!this.cluster) return;
    try {
      const changed = await this.cluster.refresh(this.settings().health.timeout_seconds * 1000);
      this.ctx.metrics.slotsRefreshed(true);
      if (changed) {
        this.ctx.logger.info({ shards: this.cluster.current()?.shards.map((s) => ({ shard: s.name, slots: s.slots })) ?? [] }, 'redis cluster slot map changed');
        if (this.checkedOnce) void this.rounds.request().catch(() => undefined);
      }
    } catch (err) {
      this.ctx.metrics.slotsRefreshed(false);
      this.ctx.logger.warn({ err: errorMessage(err) }, 'redis cluster slot map refresh failed; keeping the last one');
      throw err;
    }
  }

  private probeFor(target: BackendTarget, placement: Placement): BackendProbe {
    // proxy.test_hosts: TEST ONLY name answers standing in for DNS (the blue/green simulator)
    const address = testHostAddress(placement.connectAddress, this.settings().proxy.test_hosts);
    const key = connectionKey(target, address);
    const existing = this.probes.get(target.name);
    if (existing?.key === key) return existing.probe;
    existing?.probe.close();
    const probe = createProbe(target, address);
    this.probes.set(target.name, { key, probe });
    return probe;
  }

  private healthOf(name: string): BackendHealth {
    let health = this.health.get(name);
    if (!health) this.health.set(name, (health = new BackendHealth(`${this.ctx.protocol}/${name}`)));
    return health;
  }

  /** The shard primary's position timeline; a different primary starts a new one. */
  private timelineOf(shard: string, primary: string): PositionTimeline {
    const entry = this.timelines.get(shard);
    if (entry?.primary === primary) return entry.timeline;
    const timeline = new PositionTimeline();
    this.timelines.set(shard, { primary, timeline });
    return timeline;
  }

  /** Forgets backends that left the configuration (or the cluster). */
  private prune(targets: readonly BackendTarget[]): void {
    const names = new Set(targets.map((t) => t.name));
    for (const [name, { probe }] of this.probes) {
      if (names.has(name)) continue;
      probe.close();
      this.probes.delete(name);
    }
    for (const name of this.health.keys()) {
      if (names.has(name)) continue;
      this.health.delete(name);
      this.ctx.metrics.forget(this.ctx.protocol, name);
    }
  }
}

function describeBackend(target: BackendTarget, placement: Placement | undefined, health: BackendHealth | undefined): Record<string, unknown> {
  const last = health?.last;
  return {
    name: target.name,
    shard: placement?.shard ?? target.shard,
    role: placement?.role ?? target.role,
    address: target.address,
    connectAddress: placement?.connectAddress ?? target.address,
    state: health?.health ?? 'unchecked',
    checks: health?.checks ?? 0,
    consecutiveFailures: health?.consecutiveFailures ?? 0,
    maxLagSeconds: target.maxLagSeconds,
    lag: health?.lagVerdict ?? null,
    lastCheck: last ? { ...last, progress: last.progress?.toString() ?? null, checkedAt: new Date(last.checkedAt).toISOString() } : null,
  };
}

/** The operators' line for a backend going down or up (libs/util operational events). */
function announceHealth(protocol: Protocol, target: BackendTarget, placement: Placement, up: boolean, error: string | null): void {
  publishOperationalEvent({ event: up ? 'backend_up' : 'backend_down', protocol, backend: target.name, address: target.address, shard: placement.shard, role: placement.role, error });
}
