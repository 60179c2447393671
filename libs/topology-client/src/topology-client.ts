// The edge side of topology: follows one protocol's snapshots (subject + KV for late joiners),
// keeps the last good one when the topology service is away, and derives readiness from it.
import {
  KvRecords,
  openRecords,
  requestMessage,
  subscribeMessages,
  Subjects,
  type BackendRole,
  type Bus,
  type HealthReport,
  type Protocol,
  type Subscription,
  type TopologyRefreshRequest,
  type TopologySnapshot,
} from '@dbproxy/bus';
import type { ConfigSource } from '@dbproxy/runtime';
import { TopologyView, type BackendState } from './topology-view';

export type ReadinessStatus = 'ready' | 'degraded' | 'unready';

export interface TopologyReadiness {
  readonly status: ReadinessStatus;
  readonly reason?: string;
}

/** Where the client reports readiness changes (an edge passes its ServiceContext.readiness). */
export interface ReadinessSink {
  set(component: string, status: ReadinessStatus, reason?: string): void;
}

export interface TopologyClientOptions {
  readonly bus: Bus;
  readonly protocol: Protocol;
  readonly config: ConfigSource;
  /** Sent as `requestedBy` in refresh requests. */
  readonly instanceId: string;
  /** Degraded after this long without hearing from topology; default 3 × topology.republish_interval_seconds. */
  readonly staleAfterMs?: number;
  /** Readiness is reported here as component `topology` whenever it changes. */
  readonly readiness?: ReadinessSink;
  /** Deadline of a refresh request (default: one health check timeout plus a second, at least 2 s). */
  readonly refreshTimeoutMs?: number;
  /** How long start() waits for the KV's last snapshot (default bus.connect_timeout_seconds). */
  readonly startTimeoutMs?: number;
}

export type RefreshReason = TopologyRefreshRequest['reason'];
export type TopologyListener = (next: TopologyView, previous: TopologyView) => void;
/** Called with every health report topology publishes (replication positions for causal reads). */
export type HealthListener = (report: HealthReport) => void;

const wait = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
  });

export class TopologyClient {
  private view: TopologyView;
  private readonly health = new Map<string, HealthReport>();
  private readonly listeners = new Set<TopologyListener>();
  private readonly healthListeners = new Set<HealthListener>();
  private readonly subscriptions: Subscription[] = [];
  private lastHeardAt = Date.now();
  private reported: TopologyReadiness | undefined;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<boolean> | undefined;
  private stopped = false;

  constructor(private readonly opts: TopologyClientOptions) {
    this.view = TopologyView.empty(opts.protocol);
  }

  /** Subscribes to snapshots and health reports, then waits (bounded) for the KV's last snapshot. Never throws on a bus outage. */
  async start(): Promise<void> {
    const { bus, protocol } = this.opts;
    this.lastHeardAt = Date.now();
    this.subscriptions.push(
      subscribeMessages(bus, Subjects.topology.pattern({ protocol }), (snapshot) => this.offer(snapshot, true)),
      subscribeMessages(bus, Subjects.health.pattern({ protocol }), (report) => this.onReport(report)),
    );
    const checkEvery = Math.max(50, Math.min(1000, Math.floor(this.staleAfterMs() / 3)));
    this.timer = setInterval(() => this.report(), checkEvery);
    this.timer.unref();
    this.report();
    const timeoutMs = this.opts.startTimeoutMs ?? this.opts.config.current().config.bus.connect_timeout_seconds * 1000;
    await Promise.race([this.watchKv(), wait(timeoutMs)]);
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
    if (this.timer) clearInterval(this.timer);
    this.listeners.clear();
    this.healthListeners.clear();
  }

  /** The snapshot in force with its indexes; take it once per query for a consistent answer. */
  current(): TopologyView {
    return this.view;
  }

  generation(): number {
    return this.view.generation;
  }

  usable(shard: string, role: BackendRole): readonly BackendState[] {
    return this.view.usable(shard, role);
  }

  primary(shard: string): BackendState | undefined {
    return this.view.primary(shard);
  }

  backend(name: string): BackendState | undefined {
    return this.view.backend(name);
  }

  slotOwner(slot: number): BackendState | undefined {
    return this.view.slotOwner(slot);
  }

  /** The last health report of a backend (latency, lag, replication position). */
  lastHealth(name: string): HealthReport | undefined {
    return this.health.get(name);
  }

  /** Unready without a snapshot or while a shard primary is down; degraded while topology is silent. */
  readiness(): TopologyReadiness {
    const view = this.view;
    if (!view.snapshot) return { status: 'unready', reason: `no ${view.protocol} topology snapshot received yet` };
    const down = view.primariesDown[0];
    if (down) {
      const more = view.primariesDown.length > 1 ? ` (and ${view.primariesDown.length - 1} more shard(s))` : '';
      return { status: 'unready', reason: `${this.describeDown(down.shard, down.backend)}${more}` };
    }
    const staleAfterMs = this.staleAfterMs();
    if (Date.now() - this.lastHeardAt > staleAfterMs) {
      return { status: 'degraded', reason: `no word from the topology service for over ${staleAfterMs / 1000} s; serving generation ${view.generation}` };
    }
    return { status: 'ready' };
  }

  /** Calls `listener` with each newer snapshot; returns an unsubscribe. */
  /** Every health report from now on (its position is the backend's replication position at the check). */
  onHealth(listener: HealthListener): () => void {
    this.healthListeners.add(listener);
    return () => this.healthListeners.delete(listener);
  }

  private onReport(report: HealthReport): void {
    if (this.stopped || report.protocol !== this.opts.protocol) return;
    this.health.set(report.backend, report);
    for (const listener of this.healthListeners) listener(report);
  }

  onChange(listener: TopologyListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Asks topology for a fresh snapshot (a Redis edge after MOVED). Concurrent calls share one
   * request. Resolves true once a reply was applied, false when topology did not answer.
   */
  requestRefresh(reason: RefreshReason, detail: { slot?: number; address?: string } = {}): Promise<boolean> {
    this.refreshing ??= this.refresh(reason, detail).finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async refresh(reason: RefreshReason, detail: { slot?: number; address?: string }): Promise<boolean> {
    const { bus, protocol, instanceId } = this.opts;
    const request = { protocol, reason, requestedBy: instanceId, knownGeneration: this.view.generation, ...detail };
    let reply: TopologySnapshot;
    try {
      reply = await requestMessage(bus, Subjects.topologyRefresh, { protocol }, request, { timeoutMs: this.refreshTimeoutMs() });
    } catch {
      return false;
    }
    try {
      this.offer(reply, true);
    } catch {
      // a listener failed; the snapshot is applied all the same
    }
    return true;
  }

  /** Applies a snapshot newer than the one in force; `live` ones (not from KV) also prove topology is alive. */
  private offer(snapshot: TopologySnapshot, live: boolean): void {
    if (this.stopped || snapshot.protocol !== this.opts.protocol) return;
    if (live && snapshot.generation >= this.view.generation) this.lastHeardAt = Date.now();
    if (snapshot.generation > this.view.generation) {
      const previous = this.view;
      this.view = TopologyView.of(snapshot);
      this.report();
      this.notify(this.view, previous);
    } else {
      this.report();
    }
  }

  /** Every listener runs even when one throws; the first error is rethrown (the bus reports it). */
  private notify(next: TopologyView, previous: TopologyView): void {
    let failure: unknown;
    for (const listener of this.listeners) {
      try {
        listener(next, previous);
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  }

  private async watchKv(): Promise<void> {
    try {
      const store = await openRecords(this.opts.bus, KvRecords.topology);
      if (this.stopped) return;
      const watch = store.watch({ protocol: this.opts.protocol }, (record) => record.value && this.offer(record.value, false));
      this.subscriptions.push(watch);
      await watch.ready;
    } catch {
      // The bus is closed or KV is unavailable: the subject subscription still catches up with the next publish.
    }
  }

  private describeDown(shard: string, backend: BackendState | undefined): string {
    if (!backend) return `shard ${shard} has no primary in topology generation ${this.view.generation}`;
    const last = this.health.get(backend.name);
    const detail = last && !last.up && last.error ? `: ${last.error}` : '';
    return `shard ${shard} primary ${backend.name} (${backend.address}) is down${detail}`;
  }

  /** The service answers after a check round, which takes up to one health check timeout. */
  private refreshTimeoutMs(): number {
    return this.opts.refreshTimeoutMs ?? Math.max(2000, (this.opts.config.current().config.health.timeout_seconds + 1) * 1000);
  }

  private staleAfterMs(): number {
    return this.opts.staleAfterMs ?? this.opts.config.current().config.topology.republish_interval_seconds * 3000;
  }

  private report(): void {
    const next = this.readiness();
    if (this.reported?.status === next.status && this.reported.reason === next.reason) return;
    this.reported = next;
    this.opts.readiness?.set('topology', next.status, next.reason);
  }
}
