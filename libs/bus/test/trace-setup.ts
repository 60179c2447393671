// Test helper: what libs/observability installs at startup, minus exporters — the W3C propagator
// and an AsyncLocalStorage context manager so `context.with` really changes the active context.
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags, type Context, type ContextManager, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]): unknown => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

export function installTracePropagation(): void {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalContextManager());
}

/** A sampled remote span context with random ids, made active for `fn`. */
export function withRemoteSpan<T>(fn: (span: SpanContext) => T): T {
  const hex = (bytes: number): string => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const span: SpanContext = { traceId: hex(16), spanId: hex(8), traceFlags: TraceFlags.SAMPLED, isRemote: true };
  return context.with(trace.setSpanContext(ROOT_CONTEXT, span), () => fn(span));
}

/** The span context active right now (inside a bus handler: the one extracted from headers). */
export function activeSpanContext(): SpanContext | undefined {
  return trace.getSpanContext(context.active());
}
