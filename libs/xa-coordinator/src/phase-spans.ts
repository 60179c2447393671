// The spans of one XA transaction's phases: a CLIENT span per participant and phase (XA PREPARE
// covers XA START, the statement, XA END and XA PREPARE; XA COMMIT; XA ROLLBACK), children of the
// coordinator's xa.execute span, itself a child of the edge's statement span through the bus
// headers. Nothing is built when the xa.execute span is not recorded.
import { SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { DbAttributes, splitAddress } from '@dbproxy/observability';
import { participantError } from './participant-error';
import type { MysqlBackend } from './participants/participant-connections';

export type XaPhase = 'XA PREPARE' | 'XA COMMIT' | 'XA ROLLBACK';

export class PhaseSpans {
  private readonly parent: Context | undefined;

  constructor(
    private readonly tracer: Tracer,
    coordinator: Span,
    base: Context,
  ) {
    this.parent = coordinator.isRecording() ? trace.setSpan(base, coordinator) : undefined;
  }

  /** Runs `phase` of the branch on `shard` at `backend`, inside its span. */
  async run<T>(phase: XaPhase, shard: string, backend: MysqlBackend, work: () => Promise<T>): Promise<T> {
    if (this.parent === undefined) return work();
    const { address, port } = splitAddress(backend.address);
    const span = this.tracer.startSpan(
      `${phase} ${shard}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [DbAttributes.system]: 'mysql',
          [DbAttributes.operation]: phase,
          [DbAttributes.serverAddress]: address,
          [DbAttributes.serverPort]: port,
          [DbAttributes.backend]: backend.name,
          'dbproxy.shard': shard,
        },
      },
      this.parent,
    );
    try {
      return await work();
    } catch (err) {
      const failure = participantError(err);
      const code = failure.errno !== undefined ? String(failure.errno) : failure.code;
      span.setAttribute(DbAttributes.statusCode, code);
      span.setAttribute(DbAttributes.errorType, failure.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
      throw err;
    } finally {
      span.end();
    }
  }
}

/** What phases run without tracing. */
export const UNTRACED = { run: <T>(_phase: XaPhase, _shard: string, _backend: MysqlBackend, work: () => Promise<T>): Promise<T> => work() };
export type PhaseRunner = Pick<PhaseSpans, 'run'>;
