// Prometheus metrics of the topology service: per backend (up, latency, lag, checks, failures)
// and per protocol (generation, snapshots, refresh requests, slot refreshes, bgd actions).
import { BgdAction as BgdActionSchema, TopologyRefreshRequest, type BgdAction, type Protocol, type TopologySnapshot } from '@dbproxy/bus';
import { zeroSeries, type MetricsRegistry } from '@dbproxy/observability';
import type { CheckResult } from './checks/types';
import type { BackendHealth } from './health/backend-health';
import type { PublishTrigger } from './snapshot/snapshot-publisher';

type BackendLabels = { protocol: string; backend: string };

export class TopologyMetrics {
  private readonly up;
  private readonly latency;
  private readonly lag;
  private readonly lagging;
  private readonly checks;
  private readonly failures;
  private readonly generation;
  private readonly snapshots;
  private readonly refreshes;
  private readonly slotRefreshes;
  private readonly actions;
  private readonly suppressedResults;
  /** The shard/role labels each backend's `up` series carries now, to drop the old series when they change. */
  private readonly upLabels = new Map<string, { protocol: string; backend: string; shard: string; role: string }>();

  constructor(metrics: MetricsRegistry) {
    const backend = ['protocol', 'backend'] as const;
    this.up = metrics.gauge({ name: 'dbproxy_backend_up', help: 'Backend passed its health checks (1) or is down (0)', labelNames: [...backend, 'shard', 'role'] });
    this.latency = metrics.gauge({ name: 'dbproxy_backend_check_latency_seconds', help: 'Round trip of the last health check statement (SELECT 1 / PING)', labelNames: backend });
    this.lag = metrics.gauge({ name: 'dbproxy_backend_replication_lag_seconds', help: 'Replication lag of a replica at its last check (absent when unknown)', labelNames: backend });
    this.lagging = metrics.gauge({ name: 'dbproxy_backend_lagging', help: 'Replica out of read selection for lag or stopped replication (1) or not (0)', labelNames: backend });
    this.checks = metrics.counter({ name: 'dbproxy_backend_checks_total', help: 'Health checks run', labelNames: backend });
    this.failures = metrics.counter({ name: 'dbproxy_backend_check_failures_total', help: 'Health checks that failed (error or timeout)', labelNames: backend });
    this.generation = metrics.gauge({ name: 'dbproxy_topology_generation', help: 'Generation of the last topology snapshot published', labelNames: ['protocol'] });
    this.snapshots = metrics.counter({ name: 'dbproxy_topology_snapshots_published_total', help: 'Topology snapshots published, by trigger', labelNames: ['protocol', 'trigger'] });
    this.refreshes = metrics.counter({ name: 'dbproxy_topology_refresh_requests_total', help: 'Refresh requests from edges, by reason', labelNames: ['protocol', 'reason'] });
    this.slotRefreshes = metrics.counter({ name: 'dbproxy_topology_slot_refreshes_total', help: 'Redis Cluster slot map refreshes, by result', labelNames: ['result'] });
    this.suppressedResults = metrics.counter({ name: 'dbproxy_topology_bgd_suppressed_results_total', help: 'Check results whose read_only/replication verdict was not applied: the endpoint is in an active blue/green writer switchover', labelNames: ['protocol', 'backend'] });
    this.actions = metrics.counter({ name: 'dbproxy_topology_bgd_actions_total', help: 'Blue/green actions received, by action and whether they changed the topology', labelNames: ['action', 'applied'] });
    // outcomes known at start exist at zero (per-backend series at a backend's first check)
    zeroSeries(this.slotRefreshes, { result: ['ok', 'failed'] });
    zeroSeries(this.actions, { action: BgdActionSchema.options.map((o) => o.shape.action.value), applied: ['yes', 'no'] });
  }

  checked(protocol: Protocol, name: string, shard: string, role: string, result: CheckResult, health: BackendHealth): void {
    const labels: BackendLabels = { protocol, backend: name };
    this.checks.inc(labels);
    this.failures.inc(labels, result.ok ? 0 : 1);
    this.suppressedResults.inc(labels, 0);
    if (result.latencyMs !== null) this.latency.set(labels, result.latencyMs / 1000);
    const key = `${protocol}/${name}`;
    const previous = this.upLabels.get(key);
    if (previous && (previous.shard !== shard || previous.role !== role)) this.up.remove(previous);
    this.upLabels.set(key, { ...labels, shard, role });
    this.up.set({ ...labels, shard, role }, health.up ? 1 : 0);
    const verdict = health.lagVerdict;
    if (role === 'replica' && verdict.lagSeconds !== null) this.lag.set(labels, verdict.lagSeconds);
    else this.lag.remove(labels);
    this.lagging.set(labels, role === 'replica' && verdict.lagging ? 1 : 0);
  }

  /** Drops the series of a backend that left the configuration. */
  forget(protocol: Protocol, name: string): void {
    const labels: BackendLabels = { protocol, backend: name };
    for (const metric of [this.latency, this.lag, this.lagging, this.checks, this.failures, this.suppressedResults]) metric.remove(labels);
    const up = this.upLabels.get(`${protocol}/${name}`);
    if (up) this.up.remove(up);
    this.upLabels.delete(`${protocol}/${name}`);
  }

  published(snapshot: TopologySnapshot, trigger: PublishTrigger): void {
    this.generation.set({ protocol: snapshot.protocol }, snapshot.generation);
    this.snapshots.inc({ protocol: snapshot.protocol, trigger });
  }

  /** `protocol` is monitored: its refresh-request series exist from now on, at zero. */
  monitoring(protocol: Protocol): void {
    zeroSeries(this.refreshes, { protocol: [protocol], reason: TopologyRefreshRequest.shape.reason.options });
  }

  refreshRequested(protocol: Protocol, reason: string): void {
    this.refreshes.inc({ protocol, reason });
  }

  slotsRefreshed(ok: boolean): void {
    this.slotRefreshes.inc({ result: ok ? 'ok' : 'failed' });
  }

  bgdAction(action: BgdAction, applied: boolean): void {
    this.actions.inc({ action: action.action, applied: applied ? 'yes' : 'no' });
  }

  suppressed(protocol: Protocol, backend: string): void {
    this.suppressedResults.inc({ protocol, backend });
  }
}
