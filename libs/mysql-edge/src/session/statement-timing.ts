// Times one command of a session for the latency histograms: received, sent to the backend (with
// the pool wait it had), answered. Three calls per command, no allocation.
import { latencyClock, type EdgeLatency } from '@dbproxy/observability';

export class StatementTiming {
  private startedAt = 0;
  private sentAt = 0;
  private waitedMs = 0;
  private series: ReturnType<EdgeLatency['series']> | null = null;
  /** The series of the last (route, backend) sent to (histogram cells live as long as the edge). */
  private lastSeries: ReturnType<EdgeLatency['series']> | null = null;
  private lastRoute = '';
  private lastBackend = '';

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
    // a session's commands mostly take the same route to the same backend: no map lookups then
    if (route !== this.lastRoute || backend !== this.lastBackend || this.lastSeries === null) {
      this.lastSeries = this.latency.series(this.listener, route, backend);
      this.lastRoute = route;
      this.lastBackend = backend;
    }
    const series = (this.series = this.lastSeries);
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
