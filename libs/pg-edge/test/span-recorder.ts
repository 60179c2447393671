// Records this test process's spans in memory: a NodeTracerProvider registered as the global one
// before the runtime starts, so the services' tracers (the OpenTelemetry API's global) report here.
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';

export function recordSpans(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
  return exporter;
}
