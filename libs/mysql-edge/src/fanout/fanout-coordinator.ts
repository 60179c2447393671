// The fanout machinery of one edge process: a concurrency lane per fanout, the path of each mode,
// the copies metric and the failure log. Sessions hand it batches (session-fanout.ts).
import { Gauge, type Counter } from 'prom-client';
import type { Bus } from '@dbproxy/bus';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import type { BackendPools } from '../backend/backend-pools';
import type { EdgeEpoch } from '../epoch';
import { BestEffortPath } from './best-effort-path';
import { CopyLane } from './copy-lane';
import type { CopyStatement } from './copy-statement';
import type { CopyFailure, CopyResult, FanoutBatch, FanoutPath } from './fanout-path';
import type { FanoutRule } from './fanout-rules';
import { XaFanoutPath } from './xa-path';

export interface FanoutDeps {
  epoch(): EdgeEpoch;
  readonly pools: BackendPools;
  readonly metrics: MetricsRegistry;
  readonly logger: Logger;
  /** The bus the xa-coordinator serves dbproxy.xa.execute on, and this edge instance's id. */
  readonly bus: Bus;
  readonly instanceId: string;
}

export class FanoutCoordinator {
  private readonly lanes = new Map<string, CopyLane>();
  private readonly paths = new Map<FanoutRule['mode'], FanoutPath>();
  private readonly copies: Counter<'fanout' | 'target' | 'result'>;
  /** mode = "xa": statements go to the xa-coordinator before they run (session-xa.ts). */
  readonly xa: XaFanoutPath;

  constructor(private readonly deps: FanoutDeps) {
    this.copies = deps.metrics.counter({ name: 'dbproxy_mysql_fanout_copies_total', help: 'Fanout copies by fanout, target shard and result (ok, failed, timeout, skipped, discarded)', labelNames: ['fanout', 'target', 'result'] });
    const lanes = this.lanes;
    new Gauge({
      name: 'dbproxy_mysql_fanout_copies_in_flight', help: 'Fanout copies running now, by fanout (at most its concurrency per process)', labelNames: ['fanout'], registers: [deps.metrics.registry],
      collect(this: Gauge<'fanout'>) {
        for (const [fanout, lane] of lanes) this.set({ fanout }, lane.running);
      },
    });
    new Gauge({
      name: 'dbproxy_mysql_fanout_copies_in_flight_max', help: 'The most fanout copies that ran at once since the process started, by fanout', labelNames: ['fanout'], registers: [deps.metrics.registry],
      collect(this: Gauge<'fanout'>) {
        for (const [fanout, lane] of lanes) this.set({ fanout }, lane.maxInFlight);
      },
    });
    this.paths.set('best_effort', new BestEffortPath({
      epoch: deps.epoch,
      pools: deps.pools,
      lane: (rule) => this.lane(rule),
      counted: (rule, target, result, n = 1) => this.copies.inc({ fanout: rule.name, target, result }, n),
      failed: (batch, failure, statement) => this.logFailure(batch, failure, statement),
    }));
    this.xa = new XaFanoutPath({ bus: deps.bus, instanceId: deps.instanceId, epoch: deps.epoch, logger: deps.logger });
    this.register(this.xa);
  }

  /** Registers the path of a mode. */
  register(path: FanoutPath): void {
    this.paths.set(path.mode, path);
  }

  /** Runs one batch on its rule's path; resolves with the copies that did not succeed. */
  run(batch: FanoutBatch): Promise<CopyFailure[]> {
    const path = this.paths.get(batch.rule.mode);
    if (path !== undefined) return path.run(batch);
    // validate refuses modes without a path; an epoch that still has one fails its copies visibly
    const failures = batch.rule.targets.filter((t) => t !== batch.ownShard).map((shard): CopyFailure => ({ fanout: batch.rule.name, shard, backend: null, result: 'failed', code: 1235, message: `mode = "${batch.rule.mode}" is not in this build` }));
    for (const f of failures) this.copies.inc({ fanout: f.fanout, target: f.shard, result: 'failed' }, batch.statements.length);
    return Promise.resolve(failures);
  }

  /** Copies never sent: their transaction rolled back (or the session ended before COMMIT). */
  discarded(rule: FanoutRule, ownShard: string, n: number): void {
    for (const target of rule.targets) if (target !== ownShard) this.copies.inc({ fanout: rule.name, target, result: 'discarded' as CopyResult }, n);
  }

  private lane(rule: FanoutRule): CopyLane {
    let lane = this.lanes.get(rule.name);
    if (lane === undefined) this.lanes.set(rule.name, (lane = new CopyLane(rule.concurrency)));
    else lane.limit = rule.concurrency; // a new epoch may change it
    return lane;
  }

  /** The statement is named by its fingerprint and the error by its code: no literal values reach the log. */
  private logFailure(batch: FanoutBatch, f: CopyFailure, statement: CopyStatement): void {
    this.deps.logger.warn({ fanout: f.fanout, target: f.shard, backend: f.backend, result: f.result, code: f.code, session: batch.session, statement: statement.fingerprint }, 'mysql fanout copy failed');
  }
}
