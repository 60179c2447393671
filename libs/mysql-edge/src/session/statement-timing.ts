// Times one command of a session for the latency histograms: received, sent to the backend (with
// the pool wait it had), answered. Three calls per command, no allocation.
import { latencyClock, type EdgeLatency } from '@dbproxy/observability';

export class StatementTiming {
  private startedAt = 0;
  private sentAt = 0;
  private waitedMs = 0;
  private series: ReturnType<EdgeLatency['series']> | null = null;

  constructor(
    private readonly latency: EdgeLatency,
    private readonly listener: string,
  ) {}

  /** The client's command arrived. */
  received(): void {
    this.startedAt = latencyClock();
    this.waitedMs = 0;
    this.series = null;
  }

  /** The command waited `ms` in a pool's queue for its connection (none: it found one free, parked or pinned). */
  waited(ms: number): void {
    this.waitedMs = ms;
  }

  /** The command goes to `backend` by `route`. */
  sent(route: string, backend: string): void {
    this.sentAt = latencyClock();
    const series = (this.series = this.latency.series(this.listener, route, backend));
    series.poolWait.observe(this.waitedMs / 1000);
  }

  /** The backend's answer is complete (and on its way to the client). */
  answered(): void {
    const series = this.series;
    if (series === null) return;
    series.backend.since(this.sentAt);
    series.statement.since(this.startedAt);
    this.series = null;
  }
}
