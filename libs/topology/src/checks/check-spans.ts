// Spans of the health check rounds: an INTERNAL span per round and protocol, a CLIENT child per
// backend check (server.address/port, the check's latency, error status when it failed). Without
// a tracer provider (or for an unsampled round) nothing is built.
import { SpanKind, SpanStatusCode, trace, context, type Span, type Tracer } from '@opentelemetry/api';
import { DbAttributes, splitAddress, type DbSystemName } from '@dbproxy/observability';
import type { Protocol } from '@dbproxy/bus';
import type { BackendTarget } from '../targets';
import type { CheckResult } from './types';

const SYSTEMS: Readonly<Record<Protocol, DbSystemName>> = { mysql: 'mysql', postgres: 'postgresql', redis: 'redis' };
const NAMES: Readonly<Record<Protocol, string>> = { mysql: 'health check round mysql', postgres: 'health check round postgres', redis: 'health check round redis' };

export class CheckRoundSpan {
  private constructor(
    private readonly tracer: Tracer,
    private readonly round: Span,
    private readonly protocol: Protocol,
  ) {}

  /** The span of one round; null when nothing records it. */
  static start(tracer: Tracer | undefined, protocol: Protocol): CheckRoundSpan | null {
    if (tracer === undefined) return null;
    const round = tracer.startSpan(NAMES[protocol], { kind: SpanKind.INTERNAL, root: true });
    return round.isRecording() ? new CheckRoundSpan(tracer, round, protocol) : null;
  }

  /** Runs the check of `target` at `address` inside its CLIENT span. */
  async check(target: BackendTarget, address: string, run: () => Promise<CheckResult>): Promise<CheckResult> {
    const { address: host, port } = splitAddress(address);
    const span = this.tracer.startSpan(
      `health check ${target.name}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [DbAttributes.system]: SYSTEMS[this.protocol],
          [DbAttributes.serverAddress]: host,
          [DbAttributes.serverPort]: port,
          [DbAttributes.backend]: target.name,
          'dbproxy.shard': target.shard,
        },
      },
      trace.setSpan(context.active(), this.round),
    );
    try {
      const result = await run();
      // the engine the server named (mariadb or mysql), as the edges' spans name it
      if (result.engine !== undefined) span.setAttribute(DbAttributes.system, result.engine);
      span.setAttribute('dbproxy.health.ok', result.ok);
      span.setAttribute('dbproxy.health.role', result.roleObserved);
      if (result.latencyMs !== null) span.setAttribute('dbproxy.health.latency_ms', result.latencyMs);
      if (!result.ok) {
        span.setAttribute(DbAttributes.errorType, 'check_failed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? 'check failed' });
      }
      return result;
    } finally {
      span.end();
    }
  }

  end(): void {
    this.round.end();
  }
}
