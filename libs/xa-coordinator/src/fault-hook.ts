// TEST-ONLY fault injection for the kill -9 tests: with DBPROXY_XA_TEST_FAULT set, the coordinator
// logs "xa test fault point reached" and stops making progress at that point, so a test can
// SIGKILL the process exactly there. Points: `before-prepare` (statements ran, no XA PREPARE
// sent), `after-prepare:N` (N branches prepared), `after-decision` (commit journalled, no XA
// COMMIT sent), `after-commit:N` (N branches committed). A `:pause=MS` suffix makes it wait MS
// and go on instead (to kill a participant server there). Never set it in production.
import type { Logger } from '@dbproxy/observability';

export const FAULT_ENV = 'DBPROXY_XA_TEST_FAULT';

export type FaultPoint = 'before-prepare' | 'after-prepare' | 'after-decision' | 'after-commit';

export class FaultHook {
  private readonly counts = new Map<FaultPoint, number>();
  private stopped = false;

  private constructor(
    private readonly point: FaultPoint | undefined,
    private readonly after: number,
    private readonly logger: Logger | undefined,
    /** Wait this long and go on, instead of stopping for good. */
    private readonly pauseMs?: number,
  ) {}

  static none(): FaultHook {
    return new FaultHook(undefined, 0, undefined);
  }

  static fromEnvironment(value: string | undefined, logger: Logger): FaultHook {
    if (!value) return FaultHook.none();
    const parts = value.split(':');
    const pause = parts.find((p) => p.startsWith('pause='));
    const [point, n] = parts.filter((p) => !p.startsWith('pause='));
    const points: FaultPoint[] = ['before-prepare', 'after-prepare', 'after-decision', 'after-commit'];
    if (!points.includes(point as FaultPoint)) throw new Error(`${FAULT_ENV}: unknown point ${value}`);
    logger.warn({ point: value }, 'xa test fault hook armed (test-only)');
    return new FaultHook(point as FaultPoint, n === undefined ? 1 : Number(n), logger, pause ? Number(pause.slice('pause='.length)) : undefined);
  }

  /** Passes `point` once more; never resolves when the armed point is reached (or was). */
  async reach(point: FaultPoint, xid: string): Promise<void> {
    if (this.point === undefined) return;
    if (this.stopped) return new Promise<void>(() => undefined);
    const count = (this.counts.get(point) ?? 0) + 1;
    this.counts.set(point, count);
    if (point !== this.point || count !== this.after) return;
    this.logger?.warn({ point, count, xid }, 'xa test fault point reached');
    if (this.pauseMs !== undefined) return new Promise<void>((resolve) => setTimeout(resolve, this.pauseMs));
    this.stopped = true;
    return new Promise<void>(() => undefined);
  }
}
