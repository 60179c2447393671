// OpenTelemetry tracing: OTLP/HTTP export to the [telemetry] endpoint, W3C trace context,
// and continuing a client's trace from a sqlcommenter `traceparent`.
import { context, propagation, trace, type Context, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface TracingOptions {
  readonly serviceName: string;
  readonly serviceNamespace: string;
  readonly instance: string;
  /** OTLP/HTTP traces URL; without one (and without `exporter`) spans are not recorded. */
  readonly endpoint?: string;
  readonly sampleRatio: number;
  readonly maxExportBatchSize: number;
  /** OTLP encoding: JSON over HTTP is the one this build sends (OTLPTraceExporter of exporter-trace-otlp-http). */
  readonly protocol?: 'http/json';
  /** The batch processor sends finished spans at least this often (default 5000 ms). */
  readonly exportDelayMs?: number;
  /** Replaces the OTLP exporter (tests use an in-memory exporter). */
  readonly exporter?: SpanExporter;
}

export interface Tracing {
  tracer(name: string): Tracer;
  /** Exports every finished span now. */
  flush(): Promise<void>;
  /** Flushes pending spans and stops exporting. */
  shutdown(): Promise<void>;
}

/** Installs the W3C propagator; call once per process even when tracing is off. */
export function installPropagation(): void {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

export function startTracing(opts: TracingOptions): Tracing {
  installPropagation();
  const exporter = opts.exporter ?? (opts.endpoint ? new OTLPTraceExporter({ url: opts.endpoint }) : undefined);
  if (!exporter) return { tracer: (name) => trace.getTracer(name), flush: async () => undefined, shutdown: async () => undefined };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': opts.serviceName,
      'service.namespace': opts.serviceNamespace,
      'service.instance.id': opts.instance,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(opts.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: opts.maxExportBatchSize, ...(opts.exportDelayMs !== undefined ? { scheduledDelayMillis: opts.exportDelayMs } : {}) })],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    tracer: (name) => provider.getTracer(name),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The context of a client's trace from a `traceparent` value (e.g. a sqlcommenter comment). */
export function contextFromTraceparent(traceparent: string | undefined, tracestate?: string, base: Context = context.active()): Context {
  if (!traceparent || !TRACEPARENT.test(traceparent)) return base;
  const carrier: Record<string, string> = { traceparent };
  if (tracestate) carrier['tracestate'] = tracestate;
  return propagation.extract(base, carrier);
}
