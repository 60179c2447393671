// Latency histograms the edges observe per statement: cells bound to one label set once, observed
// with a few comparisons and adds (no label hashing or allocation per statement), copied into
// prom-client histograms when Prometheus scrapes.
import { performance } from 'node:perf_hooks';
import { Histogram } from 'prom-client';
import type { MetricsRegistry } from './metrics';

/** Sub-millisecond proxies: 50 µs … 10 s. */
export const LATENCY_BUCKETS: readonly number[] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The statement's clock: milliseconds, monotonic (pass it back to a cell's `since`). */
export const latencyClock = (): number => performance.now();

/** prom-client 15's per-series store (not in its typings; the version is pinned): bucket counts keyed by upper bound. */
interface SeriesValues {
  labels: Readonly<Record<string, string>>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

type SeriesStore = Record<string, SeriesValues>;
const storeOf = (histogram: object): SeriesStore => (histogram as { hashMap: SeriesStore }).hashMap;

/** One label set of one histogram. */
export class LatencyCell {
  /** Per bucket (not cumulative); the last one is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** The key of this cell's series in prom-client's store. */
  key = '';

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Readonly<Record<string, string>>,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    (this.counts as unknown as number[])[i]++;
    this.sum += seconds;
    this.count++;
  }

  /** Observes the time since `startedMs` (a `latencyClock()` reading). */
  since(startedMs: number): void {
    this.observe((performance.now() - startedMs) / 1000);
  }
}

/** A prom-client histogram whose series are LatencyCells, read into it at scrape time. Several edges in one process share it. */
export class CellHistogram<L extends string> {
  private readonly cells: LatencyCell[];
  private readonly histogram: Histogram<L>;

  constructor(metrics: MetricsRegistry, name: string, help: string, labelNames: readonly L[]) {
    const existing = metrics.registry.getSingleMetric(name) as (Histogram<L> & { cells?: LatencyCell[] }) | undefined;
    if (existing?.cells !== undefined) {
      this.histogram = existing;
      this.cells = existing.cells;
      return;
    }
    const cells: LatencyCell[] = [];
    this.cells = cells;
    this.histogram = new Histogram<L>({
      name,
      help,
      labelNames,
      buckets: [...LATENCY_BUCKETS],
      registers: [metrics.registry],
      collect(this: Histogram<L>) {
        for (const cell of cells) copyInto(this, cell);
      },
    });
    Object.assign(this.histogram, { cells });
  }

  /** The cell of `labels` (made once; keep it). Its series exists from now on, at zero. */
  cell(labels: Record<L, string>): LatencyCell {
    const cell = new LatencyCell(LATENCY_BUCKETS, labels);
    this.cells.push(cell);
    copyInto(this.histogram, cell);
    return cell;
  }
}

function copyInto<L extends string>(histogram: Histogram<L>, cell: LatencyCell): void {
  let series = storeOf(histogram)[cell.key];
  if (series === undefined || series.labels !== cell.labels) {
    // new, or the histogram was reset: zero() stores the labels object it is given
    histogram.zero(cell.labels as Record<L, string>);
    const store = storeOf(histogram);
    cell.key = Object.keys(store).find((k) => store[k]?.labels === cell.labels) ?? '';
    series = store[cell.key] as SeriesValues;
  }
  for (let i = 0; i < LATENCY_BUCKETS.length; i++) series.bucketValues[LATENCY_BUCKETS[i] as number] = cell.counts[i] as number;
  series.sum = cell.sum;
  series.count = cell.count;
}

type EdgeLabel = 'edge' | 'listener' | 'route' | 'backend';

/** The three cells of one (listener, route, backend) of an edge. */
export interface LatencySeries {
  /** Client statement (command) received → its answer complete. */
  readonly statement: LatencyCell;
  /** Waiting for a pooled backend connection (0 when one was free or the session holds one). */
  readonly poolWait: LatencyCell;
  /** First byte to the backend → its answer complete. */
  readonly backend: LatencyCell;
}

/**
 * An edge's latency histograms, `dbproxy_statement_duration_seconds`, `dbproxy_pool_wait_seconds`
 * and `dbproxy_backend_duration_seconds` {edge, listener, route, backend}; `series()` finds the
 * cells of one label set in three map lookups (made on first use, kept).
 */
export class EdgeLatency {
  private readonly statement: CellHistogram<EdgeLabel>;
  private readonly poolWait: CellHistogram<EdgeLabel>;
  private readonly backend: CellHistogram<EdgeLabel>;
  private readonly byListener = new Map<string, Map<string, Map<string, LatencySeries>>>();

  constructor(
    metrics: MetricsRegistry,
    private readonly edge: 'mysql' | 'postgres' | 'redis',
  ) {
    const labels: readonly EdgeLabel[] = ['edge', 'listener', 'route', 'backend'];
    this.statement = new CellHistogram(metrics, 'dbproxy_statement_duration_seconds', 'Client statement (Redis: command) received by an edge to its answer complete, by edge, listener, route and backend', labels);
    this.poolWait = new CellHistogram(metrics, 'dbproxy_pool_wait_seconds', 'Time a statement waited for a pooled backend connection (0 when one was free or held), by edge, listener, route and backend', labels);
    this.backend = new CellHistogram(metrics, 'dbproxy_backend_duration_seconds', 'Statement sent to a backend to its answer complete, by edge, listener, route and backend', labels);
  }

  series(listener: string, route: string, backend: string): LatencySeries {
    let byRoute = this.byListener.get(listener);
    if (byRoute === undefined) this.byListener.set(listener, (byRoute = new Map()));
    let byBackend = byRoute.get(route);
    if (byBackend === undefined) byRoute.set(route, (byBackend = new Map()));
    let series = byBackend.get(backend);
    if (series === undefined) {
      const labels = { edge: this.edge, listener, route, backend };
      series = { statement: this.statement.cell(labels), poolWait: this.poolWait.cell(labels), backend: this.backend.cell(labels) };
      byBackend.set(backend, series);
    }
    return series;
  }
}
