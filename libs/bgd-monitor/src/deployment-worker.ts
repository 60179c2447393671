// One worker per deployment (spec 001 "Worker And Polling Model"): poll, classify, step the state
// machine, apply the phase's effects, wait the effective interval. Its state is its own.
import { publishMessage, Subjects, type BgdPhase, type Bus } from '@dbproxy/bus';
import type { Logger } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import { buildMap, directProbeTarget, unmappedReaders, type BgPair } from './bg-mapping';
import type { DeploymentSettings } from './deployment-settings';
import type { ActionSink } from './effects';
import type { HostResolver } from './host-resolver';
import type { BgdMetrics } from './metrics';
import { intervalFor, rank, RESOLVING_PHASES, type BgdPhase as Phase } from './phases';
import { nextStep, type Step } from './state-machine';
import { TopologyPoller, type ProbeTarget } from './topology-poller';
import { classify, describeOutcome, type PollOutcome } from './topology-observation';

export interface WorkerDeps {
  readonly bus: Bus;
  readonly logger: Logger;
  readonly metrics: BgdMetrics;
  readonly actions: ActionSink;
  readonly resolve: HostResolver;
}

/** Direct green polls that may fail in a row before the worker falls back to the blue writer. */
export const DIRECT_FAILURE_LIMIT = 3;
/** How long a drained endpoint stays out of new work (its connections are retired at once). */
const DRAIN_DEADLINE_MS = 1000;
const GREEN_IP_TTL_MS = 60_000;

interface Demotion {
  readonly shard: string;
  readonly from: string;
  readonly to: string;
}

export class DeploymentWorker {
  phase: Phase = 'NONE';
  private pairs: BgPair[] = [];
  private mapBuilt = false;
  private mapStale = false;
  private writerProblem: string | null = null;
  private shunned: string[] = [];
  private writerLent: string | null = null;
  private demoted: Demotion | null = null;
  private direct: ProbeTarget | null = null;
  private directFailures = 0;
  private intervalMs: number;
  private last: { at: string; outcome: Record<string, unknown>; step: string } | null = null;
  private pending: DeploymentSettings | null = null;
  private lastBlueTarget: ProbeTarget | null = null;
  private readonly poller = new TopologyPoller();
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;
  /** Set by a step that wants unresolved pairs retried (and, in post-processing, pinned). */
  private reconcile = false;

  constructor(
    private settings: DeploymentSettings,
    private readonly deps: WorkerDeps,
  ) {
    this.intervalMs = settings.baselineMs;
  }

  get name(): string {
    return this.settings.name;
  }

  get checksum(): string {
    return (this.pending ?? this.settings).checksum;
  }

  start(): void {
    this.running = this.loop();
  }

  /** A checksum change: the new configuration is applied in place before the next poll. */
  refresh(next: DeploymentSettings): void {
    this.pending = next;
  }

  /** Worker stop (disable, removal, loss of the blue writer): rollback from an active state. */
  async stop(reason: string): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.running;
    if (this.phase !== 'NONE') this.rollback(`worker stopped: ${reason}`);
    this.poller.close();
  }

  describe(): Record<string, unknown> {
    const probe = this.direct ?? this.lastBlueTarget;
    return {
      name: this.settings.name,
      phase: this.phase,
      interval_ms: this.intervalMs,
      mode: this.settings.mode,
      checksum: this.settings.checksum,
      mapping: this.pairs.map((p) => ({ kind: p.kind, blue: p.blue.name, blueHost: p.blue.host, greenHost: p.greenHost, green: p.green?.name ?? null, greenIp: p.greenIp, pinned: p.pinned })),
      writerProblem: this.writerProblem,
      pins: Object.fromEntries(this.pairs.filter((p) => p.pinned && p.greenIp).map((p) => [p.blue.host, p.greenIp])),
      shunned: [...this.shunned],
      writerLentToReaders: this.writerLent,
      demotedWriter: this.demoted,
      probe: probe ? { host: probe.host, port: probe.port, tls: probe.tls.enabled, direct: this.direct !== null, failures: this.directFailures } : null,
      tableCheck: this.poller.checkingTable,
      lastObservation: this.last,
    };
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.tick();
      } catch (err) {
        this.deps.logger.error({ deployment: this.name, err: errorMessage(err) }, 'blue/green poll failed');
      }
      if (this.stopped) return;
      this.deps.metrics.intervalMs(this.name, this.intervalMs);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, this.intervalMs);
      });
    }
  }

  private async tick(): Promise<void> {
    if (this.pending) this.applyRefresh(this.pending);
    const target = this.direct ?? (this.lastBlueTarget = this.blueTarget(await this.deps.resolve(this.settings.blueWriter?.host ?? '')));
    if (!target) {
      this.observe({ kind: 'query-error', detail: `cannot resolve ${this.settings.blueWriter?.host}` });
      return;
    }
    const outcome = await this.poller.poll(target, this.settings.timeoutMs);
    if (this.stopped) return;
    if (this.direct) {
      if (outcome.kind === 'query-error') {
        if (++this.directFailures >= DIRECT_FAILURE_LIMIT) this.fallBackFromDirect(outcome.detail);
        this.deps.metrics.polled(this.name, outcome.kind);
        return;
      }
      this.directFailures = 0;
    }
    this.observe(outcome);
    if (this.reconcile) {
      this.reconcile = false;
      await this.resolveAndReconcile();
    }
  }

  private observe(outcome: PollOutcome): void {
    this.deps.metrics.polled(this.name, outcome.kind);
    const step = nextStep(this.phase, outcome);
    this.last = { at: new Date().toISOString(), outcome: describeOutcome(outcome), step: step.kind };
    if (outcome.kind === 'absent' || outcome.kind === 'query-error') this.deps.logger.debug({ deployment: this.name, outcome: outcome.kind, detail: outcome.detail }, 'rds_topology poll');
    this.apply(step, outcome);
  }

  private apply(step: Step, outcome: PollOutcome): void {
    const endpoint = outcome.kind === 'rows' && classify(outcome.rows, outcome.columns).blueGreen ? outcome.rows.find((r) => r.role === 'BLUE_GREEN_DEPLOYMENT_TARGET')?.endpoint ?? undefined : undefined;
    const status = step.kind === 'forward' || step.kind === 'backward' ? step.status : null;
    switch (step.kind) {
      case 'equal':
        if (this.mapStale && this.phase !== 'NONE') this.rebuildMap(endpoint);
        if (RESOLVING_PHASES.has(this.phase)) this.reconcile = true;
        return;
      case 'ignore':
      case 'query-error':
        return;
      case 'forward':
        return this.forward(step.to, status, endpoint);
      case 'backward':
        this.rollback(`target status ${status} is behind ${this.phase}`);
        if (step.to === 'AVAILABLE') this.forward('AVAILABLE', status, endpoint);
        return;
      case 'reset':
        // Not a cleanup: NONE and the baseline interval only (spec 001 "Backward And Unrecognized Phases").
        this.enter('NONE', null, step.why);
        return;
      case 'drained':
        if (step.absent) this.intervalMs = this.settings.baselineMs;
        if (step.cleanup === 'success') this.succeed();
        else if (step.cleanup === 'rollback') this.rollback(step.absent ? 'mysql.rds_topology is gone before writer completion' : 'topology drained before writer completion');
        return;
    }
  }

  private forward(to: BgdPhase, status: string | null, endpoint: string | undefined): void {
    if (to === 'WRITER_SWITCHOVER_COMPLETED') {
      const first = this.phase === 'NONE';
      for (const p of this.pairs) if (p.kind === 'writer' && p.pinned) this.deps.actions.send({ action: 'unpin-dns', hostname: p.blue.host }, 'writer completion: normal DNS resumes for the writer name');
      this.enter('WRITER_SWITCHOVER_COMPLETED', status, first ? 'first observation at completion' : 'writer DNS propagated');
      this.enter('READER_SWITCHOVER_IN_PROGRESS', status, 'reader cleanup waits for the topology to drain');
      return;
    }
    if (!this.mapBuilt || this.mapStale) this.rebuildMap(endpoint);
    if (rank(to) >= rank('WRITER_SWITCHOVER_IN_PROGRESS')) this.demoteWriter();
    this.enter(to, status, `target status ${status}`);
    this.reconcile = true;
  }

  private enter(to: BgdPhase, status: string | null, reason: string): void {
    const from = this.phase;
    this.phase = to;
    this.intervalMs = intervalFor(to, this.settings.baselineMs);
    if (from === to) return;
    this.deps.metrics.transition(this.name, from, to);
    this.deps.logger.info({ deployment: this.name, from, to, status, reason }, 'blue/green phase changed');
    const writer = this.pairs.find((p) => p.kind === 'writer');
    const blue = this.settings.blueWriter;
    publishMessage(this.deps.bus, Subjects.bgdState, { deployment: this.name }, {
      deployment: this.name,
      phase: to,
      previousPhase: from,
      observedStatus: status,
      writer: blue ? { blue: blue.name, green: writer?.green?.name ?? null, greenAddress: writer?.greenIp ? `${writer.greenIp}:${blue.port}` : null } : null,
      reason: reason.slice(0, 1024),
      changedAt: new Date().toISOString(),
    });
  }

  private rebuildMap(endpoint: string | undefined): void {
    const previousDemotion = this.demoted;
    const map = buildMap(this.settings, endpoint);
    this.pairs = map.pairs;
    this.writerProblem = map.writerProblem;
    this.mapBuilt = true;
    this.mapStale = false;
    if (map.writerProblem) this.deps.logger.warn({ deployment: this.name, problem: map.writerProblem }, 'blue writer not mapped to a green writer');
    // In-place refresh during IN_PROGRESS: restore a replaced old writer, then demote the newly mapped one.
    const writer = this.pairs.find((p) => p.kind === 'writer');
    if (previousDemotion && (writer?.green?.name !== previousDemotion.to || writer.blue.name !== previousDemotion.from)) {
      this.deps.actions.send({ action: 'move-writer', shard: previousDemotion.shard, from: previousDemotion.to, to: previousDemotion.from }, 'configuration refresh: restore the replaced writer');
      this.demoted = null;
      if (this.phase === 'WRITER_SWITCHOVER_IN_PROGRESS') this.demoteWriter();
    }
  }

  /** Explicit mode: the blue writer leaves the writer role for the configured green writer. */
  private demoteWriter(): void {
    const writer = this.pairs.find((p) => p.kind === 'writer');
    if (this.demoted || !writer?.green) return;
    this.demoted = { shard: writer.blue.shard, from: writer.blue.name, to: writer.green.name };
    this.deps.actions.send({ action: 'move-writer', ...this.demoted }, 'writer switchover in progress: blue writer demoted');
  }

  /** Retries unresolved green IPs; in post-processing pins and drains newly resolved pairs once and shuns unmapped readers. */
  private async resolveAndReconcile(): Promise<void> {
    const now = Date.now();
    for (const p of this.pairs) {
      if (p.greenIp && (p.pinned || (p.greenIpExpiresAt ?? 0) > now)) continue;
      const ip = await this.deps.resolve(p.greenHost);
      if (ip) {
        p.greenIp = ip;
        p.greenIpExpiresAt = now + GREEN_IP_TTL_MS;
      }
    }
    if (this.stopped || !RESOLVING_PHASES.has(this.phase)) return;
    this.useDirectProbe();
    if (this.phase !== 'WRITER_SWITCHOVER_POST_PROCESSING') return;
    for (const p of this.pairs) {
      if (p.pinned || !p.greenIp) continue;
      p.pinned = true;
      this.deps.actions.send({ action: 'pin-dns', hostname: p.blue.host, ip: p.greenIp }, `post-processing: ${p.blue.host} now reaches green ${p.greenHost}`);
      this.deps.actions.send({ action: 'drain-backend', backend: p.blue.name, deadlineMs: DRAIN_DEADLINE_MS }, 'post-processing: connections to the blue endpoint retire');
    }
    this.shunUnmappedReaders();
  }

  private useDirectProbe(): void {
    const writer = this.pairs.find((p) => p.kind === 'writer');
    const blue = this.settings.blueWriter;
    if (this.direct || !writer?.greenIp || !blue) return;
    this.direct = directProbeTarget(writer);
    if (!this.direct) return;
    this.directFailures = 0;
    this.deps.logger.info({ deployment: this.name, probe: `${this.direct.host}:${this.direct.port}` }, 'topology polls go to the green writer directly');
  }

  private shunUnmappedReaders(): void {
    const readers = unmappedReaders(this.settings, this.pairs);
    for (const r of readers) {
      if (this.shunned.includes(r.name)) continue;
      this.shunned.push(r.name);
      this.deps.actions.send({ action: 'shun', backend: r.name }, 'post-processing: blue reader without a green counterpart');
    }
    const blue = this.settings.blueWriter;
    const noneLeft = this.settings.blueReaders.length > 0 && this.shunned.length >= this.settings.blueReaders.length;
    if (noneLeft && blue && !this.settings.writerIsAlsoReader && this.writerLent === null) {
      this.writerLent = blue.name;
      this.deps.actions.send({ action: 'writer-serves-reads', shard: blue.shard, backend: blue.name, serves: true }, 'every blue reader is shunned: the writer serves reads');
    }
  }

  private fallBackFromDirect(detail: string): void {
    this.deps.logger.warn({ deployment: this.name, probe: this.direct && `${this.direct.host}:${this.direct.port}`, detail }, `${DIRECT_FAILURE_LIMIT} direct green polls failed: polling through the blue writer again`);
    this.direct = null;
    this.directFailures = 0;
    this.poller.close();
    for (const p of this.pairs) {
      if (!p.pinned) continue;
      this.deps.actions.send({ action: 'unpin-dns', hostname: p.blue.host }, 'direct green polls failed');
      p.pinned = false;
      p.greenIp = null;
    }
  }

  /** Unshuns recorded readers, returns a lent writer, removes pins; shared by both cleanups. */
  private undoReaderEffects(why: string): void {
    if (this.writerLent) {
      const blue = this.settings.blueWriter;
      this.deps.actions.send({ action: 'writer-serves-reads', shard: blue?.shard ?? 'default', backend: this.writerLent, serves: false }, `${why}: writer_is_also_reader restored`);
    }
    for (const r of this.shunned) this.deps.actions.send({ action: 'unshun', backend: r }, why);
    for (const p of this.pairs) if (p.pinned && !(p.kind === 'writer' && rank(this.phase) >= rank('WRITER_SWITCHOVER_COMPLETED'))) this.deps.actions.send({ action: 'unpin-dns', hostname: p.blue.host }, why);
  }

  private rollback(why: string): void {
    if (this.demoted) this.deps.actions.send({ action: 'move-writer', shard: this.demoted.shard, from: this.demoted.to, to: this.demoted.from }, `rollback: ${why}`);
    this.undoReaderEffects(`rollback: ${why}`);
    this.clear();
    this.enter('NONE', null, `rollback: ${why}`);
  }

  private succeed(): void {
    this.undoReaderEffects('switchover completed');
    for (const g of [this.settings.greenWriter, ...this.settings.greenReaders]) {
      if (g) this.deps.actions.send({ action: 'drain-backend', backend: g.name, deadlineMs: DRAIN_DEADLINE_MS }, 'switchover completed: green pools drained');
    }
    this.clear();
    this.enter('SWITCHOVER_COMPLETED', null, 'topology drained after writer completion');
    this.enter('NONE', null, 'cleanup done');
  }

  private clear(): void {
    this.pairs = [];
    this.mapBuilt = false;
    this.mapStale = false;
    this.shunned = [];
    this.writerLent = null;
    this.demoted = null;
    this.direct = null;
    this.directFailures = 0;
    this.poller.close();
  }

  private applyRefresh(next: DeploymentSettings): void {
    this.pending = null;
    const before = this.phase;
    if (rank(before) >= rank('WRITER_SWITCHOVER_POST_PROCESSING')) {
      this.rollback('configuration changed at or after post-processing');
      this.settings = next;
      this.poller.resetToTableCheck();
    } else {
      this.settings = next;
      this.direct = null;
      this.directFailures = 0;
      this.mapStale = true;
    }
    this.intervalMs = intervalFor(this.phase, next.baselineMs);
    this.deps.logger.info({ deployment: this.name, phase: before, checksum: next.checksum }, 'deployment configuration refreshed in place');
  }

  private blueTarget(ip: string | null): ProbeTarget | null {
    const blue = this.settings.blueWriter;
    if (!blue || !ip) return null;
    return { host: ip, port: blue.port, serverName: blue.host, tls: blue.tls, username: blue.username, password: blue.password };
  }
}
