// Times one transaction-mode unit (statements up to Sync) for the latency histograms: begun,
// waiting for a pooled connection, sent to the backend, answered (ReadyForQuery). No allocation per unit;
// the steps that happen in one call share the caller's clock reading (`now`), each reading costs ~0.1 µs.
import { latencyClock, type EdgeLatency, type LatencySeries } from '@dbproxy/observability';

export class UnitTiming {
  private startedAt = 0;
  private waitStartedAt = 0;
  private sentAt = 0;
  private route = '';
  private backend = '';
  private series: LatencySeries | null = null;
  private open = false;

  constructor(
    private readonly latency: EdgeLatency,
    private readonly listener: string,
  ) {}

  /** A unit starts; a batch continued after Flush keeps its start. */
  begin(now = latencyClock()): void {
    if (this.open) return;
    this.open = true;
    this.startedAt = now;
    this.series = null;
  }

  /** The unit asks `backend`'s pool for a connection, by `route` (primary, replica, fallback). */
  acquiring(route: string, backend: string, now = latencyClock()): void {
    this.route = route;
    this.backend = backend;
    this.waitStartedAt = now;
  }

  /** The pool lent the connection. */
  acquired(now = latencyClock()): void {
    const series = this.seriesNow();
    series.poolWait.observe((now - this.waitStartedAt) / 1000);
  }

  /** The unit runs on the connection the session holds: no pool wait. */
  onHeld(backend: string): void {
    this.route = 'held';
    this.backend = backend;
    this.seriesNow().poolWait.observe(0);
  }

  /** The unit's bytes went to the backend. */
  sent(now = latencyClock()): void {
    if (this.series !== null && this.sentAt === 0) this.sentAt = now;
  }

  /** ReadyForQuery came back: the unit's answer is complete. */
  answered(): void {
    const series = this.series;
    this.open = false;
    this.series = null;
    if (series === null || this.sentAt === 0) return;
    const now = latencyClock();
    series.backend.observe((now - this.sentAt) / 1000);
    series.statement.observe((now - this.startedAt) / 1000);
    this.sentAt = 0;
  }

  /** The unit ended without the backend's answer (refused, abandoned). */
  dropped(): void {
    this.open = false;
    this.series = null;
    this.sentAt = 0;
  }

  private seriesNow(): LatencySeries {
    return (this.series = this.latency.series(this.listener, this.route, this.backend));
  }
}
