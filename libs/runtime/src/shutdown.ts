// Bounded shutdown: drains services until the deadline, closes them within a fixed grace, and
// names the ones that overran instead of waiting for them forever (DESIGN §4, graceful drain).
import type { Logger } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import type { RunningService } from './service';

/** How late after the deadline a drain may still settle (drains poll their sessions). */
export const DRAIN_LATENESS_MS = 1_000;
/** How long services' `close()` may take once the drain phase is over. */
export const CLOSE_GRACE_MS = 3_000;
/** How long each of the runtime's own closes (admin HTTP, bus, trace export) may take. */
export const RUNTIME_CLOSE_MS = 2_000;

export interface ShutdownReport {
  /** Every service drained by the deadline and closed within the grace, without an error. */
  readonly clean: boolean;
  /** Services whose drain, close or worker processes did not finish in time. */
  readonly overran: readonly string[];
  /** Services whose drain or close failed with an error. */
  readonly failed: readonly string[];
}

export type Outcome = { readonly status: 'done' } | { readonly status: 'failed'; readonly error: unknown } | { readonly status: 'timeout' };

/** Waits for each task at most `ms` (one timer for all); says how each one ended. */
export async function settleWithin(tasks: readonly (Promise<unknown> | undefined)[], ms: number): Promise<Outcome[]> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve({ status: 'timeout' }), ms)));
  try {
    const settled = tasks.map((task) =>
      Promise.resolve(task).then(
        (): Outcome => ({ status: 'done' }),
        (error: unknown): Outcome => ({ status: 'failed', error }),
      ),
    );
    return await Promise.all(settled.map((outcome) => Promise.race([outcome, expired])));
  } finally {
    clearTimeout(timer);
  }
}

/** What the runtime drains for one service. */
export interface DrainTarget {
  readonly name: string;
  readonly service: RunningService;
  /** Worker processes of the service: how many had to be killed or exited with an error. */
  drainWorkers?(deadline: number): Promise<{ killed: number; failed: number }>;
  /** Destroys the connections its listeners admitted that are still open; returns how many. */
  destroyConnections(): number;
}

/** Which services overran or failed, as the phases find them. */
class ShutdownTally {
  readonly overran = new Set<string>();
  readonly failed = new Set<string>();

  constructor(
    private readonly targets: readonly DrainTarget[],
    private readonly logger: Logger,
  ) {}

  /** Logs and records failures of one phase; records and returns the services that timed out. */
  record(outcomes: readonly Outcome[], step: 'drain' | 'close'): string[] {
    const late: string[] = [];
    outcomes.forEach((outcome, i) => {
      const name = this.targets[i]?.name ?? '';
      if (outcome.status === 'failed') {
        this.logger.error({ service: name, err: errorMessage(outcome.error) }, `service failed to ${step}`);
        this.failed.add(name);
      } else if (outcome.status === 'timeout') {
        late.push(name);
        this.overran.add(name);
      }
    });
    return late;
  }

  report(): ShutdownReport {
    return { clean: this.overran.size === 0 && this.failed.size === 0, overran: [...this.overran], failed: [...this.failed] };
  }
}

async function drainPhase(targets: readonly DrainTarget[], deadline: number, tally: ShutdownTally, logger: Logger): Promise<void> {
  const [drained, workers] = await Promise.all([
    settleWithin(
      targets.map((t) => t.service.drain?.(deadline)),
      Math.max(0, deadline - Date.now()) + DRAIN_LATENESS_MS,
    ),
    Promise.all(targets.map((t) => t.drainWorkers?.(deadline))),
  ]);
  const late = tally.record(drained, 'drain');
  if (late.length > 0) {
    logger.error({ services: late, deadline: new Date(deadline).toISOString(), lateness_ms: DRAIN_LATENESS_MS }, `shutdown deadline overrun: ${late.join(', ')} did not finish draining; closing anyway`);
  }
  workers.forEach((outcome, i) => {
    const name = targets[i]?.name ?? '';
    if (!outcome || outcome.killed + outcome.failed === 0) return;
    if (outcome.killed > 0) tally.overran.add(name);
    if (outcome.failed > 0) tally.failed.add(name);
    logger.error({ service: name, killed: outcome.killed, failed: outcome.failed }, `${name} worker processes did not shut down cleanly`);
  });
}

async function closePhase(targets: readonly DrainTarget[], tally: ShutdownTally, logger: Logger): Promise<void> {
  const closed = await settleWithin(
    targets.map((t) => t.service.close()),
    CLOSE_GRACE_MS,
  );
  const late = tally.record(closed, 'close');
  if (late.length > 0) logger.error({ services: late, grace_ms: CLOSE_GRACE_MS }, `shutdown deadline overrun: ${late.join(', ')} did not close within ${CLOSE_GRACE_MS} ms; abandoning them`);
}

/**
 * Drains every service until `deadline` (+ DRAIN_LATENESS_MS), then closes them all (at most
 * CLOSE_GRACE_MS); a service that overran either step is named in an error log line and the
 * connections its listeners admitted are destroyed.
 */
export async function drainAndClose(targets: readonly DrainTarget[], deadline: number, logger: Logger): Promise<ShutdownReport> {
  const tally = new ShutdownTally(targets, logger);
  await drainPhase(targets, deadline, tally, logger);
  await closePhase(targets, tally, logger);
  for (const target of targets) {
    if (!tally.overran.has(target.name)) continue;
    const destroyed = target.destroyConnections();
    if (destroyed > 0) logger.warn({ service: target.name, connections: destroyed }, 'destroyed connections left open by a service that overran its shutdown');
  }
  return tally.report();
}

/** Runs one of the runtime's own closes, bounded; a close that hangs or fails is logged and left. */
export async function closeBounded(what: string, close: () => Promise<unknown> | undefined, logger: Logger): Promise<void> {
  const [outcome] = await settleWithin([Promise.resolve().then(close)], RUNTIME_CLOSE_MS);
  if (outcome?.status === 'timeout') logger.warn({ component: what, timeout_ms: RUNTIME_CLOSE_MS }, `${what} did not close in time; leaving it`);
  if (outcome?.status === 'failed') logger.warn({ component: what, err: errorMessage(outcome.error) }, `${what} failed to close`);
}
