// Prometheus metrics: one registry per process with default Node.js metrics, and get-or-create
// helpers so several services in one process can share metric names without clashing.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricSpec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
}

export interface HistogramSpec<L extends string> extends MetricSpec<L> {
  readonly buckets?: number[];
}

export class MetricsRegistry {
  readonly registry = new Registry();

  constructor(defaultLabels: Record<string, string> = {}) {
    this.registry.setDefaultLabels(defaultLabels);
    collectDefaultMetrics({ register: this.registry });
    // gauges named like counters (promtool refuses them); nodejs_active_{handles,requests,resources}{type} hold the same figures
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
  }

  counter<L extends string>(spec: MetricSpec<L> & { collect?: (this: Counter<L>) => void }): Counter<L> {
    const existing = this.registry.getSingleMetric(spec.name);
    if (existing) return existing as Counter<L>;
    return new Counter({ name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], registers: [this.registry], ...(spec.collect ? { collect: spec.collect } : {}) });
  }

  gauge<L extends string>(spec: MetricSpec<L> & { collect?: (this: Gauge<L>) => void }): Gauge<L> {
    const existing = this.registry.getSingleMetric(spec.name);
    if (existing) return existing as Gauge<L>;
    return new Gauge({ name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], registers: [this.registry], ...(spec.collect ? { collect: spec.collect } : {}) });
  }

  histogram<L extends string>(spec: HistogramSpec<L>): Histogram<L> {
    const existing = this.registry.getSingleMetric(spec.name);
    if (existing) return existing as Histogram<L>;
    return new Histogram({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames ?? [],
      buckets: spec.buckets ?? [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
  }

  /** The text exposition format for GET /metrics. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * Makes every combination of `values` exist at zero (label sets known at start: listeners,
 * backends, outcomes), so a dashboard or an alert sees the series before the first event. Adds 0:
 * a series that already counts keeps its value.
 */
export function zeroSeries<L extends string>(metric: Counter<L> | Gauge<L>, values: { readonly [K in L]: readonly string[] }): void {
  const names = Object.keys(values) as L[];
  const labels = {} as Record<L, string>;
  const visit = (depth: number): void => {
    if (depth === names.length) return void metric.inc({ ...labels }, 0);
    const name = names[depth] as L;
    for (const value of values[name]) {
      labels[name] = value;
      visit(depth + 1);
    }
  };
  visit(0);
}
