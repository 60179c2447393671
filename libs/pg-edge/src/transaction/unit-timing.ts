// Times one transaction-mode unit (statements up to Sync) for the latency histograms: begun,
// waiting for a pooled connection, sent to the backend, answered (ReadyForQuery). No allocation per unit.
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
  begin(): void {
    if (this.open) return;
    this.open = true;
    this.startedAt = latencyClock();
    this.series = null;
  }

  /** The unit asks `backend`'s pool for a connection, by `route` (primary, replica, fallback). */
  acquiring(route: string, backend: string): void {
    this.route = route;
    this.backend = backend;
    this.waitStartedAt = latencyClock();
  }

  /** The pool lent the connection. */
  acquired(): void {
    const series = this.seriesNow();
    series.poolWait.since(this.waitStartedAt);
  }

  /** The unit runs on the connection the session holds: no pool wait. */
  onHeld(backend: string): void {
    this.route = 'held';
    this.backend = backend;
    this.seriesNow().poolWait.observe(0);
  }

  /** The unit's bytes went to the backend. */
  sent(): void {
    if (this.series !== null && this.sentAt === 0) this.sentAt = latencyClock();
  }

  /** ReadyForQuery came back: the unit's answer is complete. */
  answered(): void {
    const series = this.series;
    this.open = false;
    this.series = null;
    if (series === null || this.sentAt === 0) return;
    series.backend.since(this.sentAt);
    series.statement.since(this.startedAt);
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
