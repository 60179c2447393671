// Public entry point of libs/observability: pino logging, prom-client metrics, OpenTelemetry
// tracing over OTLP/HTTP, and the subscriber for libraries' diagnostics channels.
export { createLogger, type Logger, type LoggerOptions } from './logging';
export { MetricsRegistry, zeroSeries, type MetricSpec, type HistogramSpec } from './metrics';
export { startTracing, installPropagation, contextFromTraceparent, type Tracing, type TracingOptions } from './tracing';
export { observeLibraryChannels, type ObserveOptions } from './diagnostics';
export { LogRateLimit } from './log-rate-limit';
export { DbSpan, DbAttributes, dbSpanName, mysqlSystemOf, splitAddress, tracerRecords, type DbOperation, type DbSystemName } from './db-span';
export { EdgeLatency, CellHistogram, LatencyCell, LATENCY_BUCKETS, latencyClock, type LatencySeries } from './latency';
