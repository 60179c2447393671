// W3C trace context on bus headers: injected from the active context on send, extracted on receipt.
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import type { BusHeaders } from './types';

/** Copies `headers` and adds the active trace context (via the globally installed propagator). */
export function withTraceContext(headers: Record<string, string> | undefined): Record<string, string> {
  const carrier: Record<string, string> = { ...headers };
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Runs `fn` inside the trace context carried by `headers` (a fresh root when there is none). */
export function inTraceContext<T>(headers: BusHeaders, fn: () => T): T {
  return context.with(propagation.extract(ROOT_CONTEXT, headers), fn);
}
