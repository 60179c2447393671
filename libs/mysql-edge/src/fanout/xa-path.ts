// mode = "xa": the statement does not run on the edge's connections at all. It goes to the
// xa-coordinator (dbproxy.xa.execute, XaClient of libs/xa-coordinator) with the statement's own
// shard primary and every target shard's primary as participants, and the client gets one answer:
// OK (the own shard's affected rows) once the commit decision is durable, else an ERR — the
// participants' errors when the decision was rollback, "not run" when no coordinator took it, or
// "outcome decided by the journal" when the coordinator did not answer. Never a false OK.
import { context, trace, type Span } from '@opentelemetry/api';
import type { Bus } from '@dbproxy/bus';
import type { Logger } from '@dbproxy/observability';
import { XaClient, type XaParticipant } from '@dbproxy/xa-coordinator';
import { DbproxyError } from '@dbproxy/util';
import type { EdgeEpoch } from '../epoch';
import { MysqlEdgeErrors } from '../errors';
import type { CopyFailure, FanoutBatch, FanoutPath } from './fanout-path';
import type { FanoutRule } from './fanout-rules';

export interface XaPathDeps {
  readonly bus: Bus;
  /** This edge instance (the request's `requestedBy`). */
  readonly instanceId: string;
  epoch(): EdgeEpoch;
  readonly logger: Logger;
}

/** One statement for the coordinator. */
export interface XaStatement {
  readonly rules: readonly FanoutRule[];
  readonly ownShard: string;
  readonly sql: string;
  readonly session: number;
  /** The statement's fingerprint (the log never shows literal values). */
  readonly fingerprint: string;
  /** The edge's span of the statement; the coordinator's spans continue it through the bus headers. */
  readonly span: Span | null;
}

type Outcome = { shard: string; backend: string; outcome: string; affectedRows?: number; error?: { code: string; message: string; errno?: number; sqlState?: string } };

/** Refusals the coordinator answers before any participant ran anything. */
const NOT_RUN = new Set(['DBP_ERR_XA_STATEMENT_NOT_ALLOWED', 'DBP_ERR_XA_UNKNOWN_PARTICIPANT', 'DBP_ERR_XA_BUSY']);

function describe(o: Outcome): string {
  const e = o.error;
  if (e === undefined) return `shard ${o.shard} (${o.backend}): ${o.outcome}`;
  const errno = e.errno === undefined ? e.code : `${e.errno}${e.sqlState ? ` (${e.sqlState})` : ''}`;
  return `shard ${o.shard} (${o.backend}): ${errno} ${e.message}`;
}

export class XaFanoutPath implements FanoutPath {
  readonly mode = 'xa' as const;

  constructor(private readonly deps: XaPathDeps) {}

  /**
   * The after-the-statement slot of FanoutPath: never used, since xa statements go to execute()
   * before they run (session-hooks.ts); a batch that reaches it anyway fails visibly.
   */
  run(batch: FanoutBatch): Promise<CopyFailure[]> {
    return Promise.resolve(batch.rule.targets.filter((t) => t !== batch.ownShard).map((shard): CopyFailure => ({ fanout: batch.rule.name, shard, backend: null, result: 'failed', code: 1399, message: 'an XA fanout statement cannot be copied after it ran' })));
  }

  /** Participants: the own shard's primary first, then each target's (each shard once). */
  participants(s: XaStatement): XaParticipant[] | DbproxyError {
    const epoch = this.deps.epoch();
    const shards = [...new Set([s.ownShard, ...s.rules.flatMap((r) => r.targets)])];
    const out: XaParticipant[] = [];
    for (const shard of shards) {
      const primary = epoch.directory.primary(shard);
      if (primary === undefined) {
        const why = epoch.directory.unusable(shard, 'primary', false, Date.now());
        return MysqlEdgeErrors.xaUnavailable(why instanceof DbproxyError ? why.message : `no usable primary for shard "${shard}"`);
      }
      out.push({ shard, backend: primary.name });
    }
    return out;
  }

  /** Resolves with the own shard's affected rows on commit, or with the client's error; never rejects. */
  async execute(s: XaStatement): Promise<{ affectedRows: number } | DbproxyError> {
    const participants = this.participants(s);
    if (participants instanceof DbproxyError) return participants;
    const epoch = this.deps.epoch();
    const deadlineMs = Math.min(...s.rules.map((r) => r.timeoutMs));
    const commitAllowanceMs = epoch.config.mysql.xa.decision_timeout_seconds * 1000;
    const client = new XaClient(this.deps.bus, { requestedBy: this.deps.instanceId, commitAllowanceMs });
    const ctx = s.span === null ? context.active() : trace.setSpan(context.active(), s.span);
    try {
      const result = await context.with(ctx, () => client.execute({ statement: s.sql, participants, deadlineMs }));
      s.span?.setAttributes({ 'dbproxy.xa.xid': result.xid, 'dbproxy.xa.decision': 'commit' });
      if (!result.allConfirmed) this.deps.logger.warn({ xid: result.xid, session: s.session, statement: s.fingerprint }, 'mysql xa fanout: committed, some XA COMMIT left to the coordinator recovery');
      const own = result.outcomes.find((o) => o.shard === s.ownShard);
      return { affectedRows: own?.affectedRows ?? 0 };
    } catch (err) {
      const answer = this.clientError(err, deadlineMs + commitAllowanceMs);
      s.span?.setStatus({ code: 2, message: answer.message });
      this.deps.logger.warn({ session: s.session, statement: s.fingerprint, code: answer.code, cause: err instanceof DbproxyError ? err.code : 'unknown' }, 'mysql xa fanout statement failed');
      return answer;
    }
  }

  private clientError(err: unknown, waitedMs: number): DbproxyError {
    if (!(err instanceof DbproxyError)) throw err;
    switch (err.code) {
      case 'DBP_ERR_XA_ABORTED': {
        const { xid, outcomes } = err as DbproxyError & { xid: string; outcomes: Outcome[] };
        return MysqlEdgeErrors.xaAborted(xid, outcomes.map(describe).join('; '));
      }
      case 'DBP_ERR_BUS_NO_RESPONDERS':
        return MysqlEdgeErrors.xaUnavailable('no xa-coordinator serves dbproxy.xa.execute on the bus (is the xa-coordinator service running with [mysql.xa] enabled = true?)');
      case 'DBP_ERR_BUS_UNAVAILABLE':
        return MysqlEdgeErrors.xaUnavailable('the bus to the xa-coordinator is unavailable');
      case 'DBP_ERR_BUS_TIMEOUT':
        return MysqlEdgeErrors.xaNoAnswer(`the xa-coordinator did not answer within ${waitedMs} ms`);
      case 'DBP_ERR_BUS_REMOTE': {
        const code = String(err.args[1] ?? '');
        if (NOT_RUN.has(code)) return MysqlEdgeErrors.xaUnavailable(`the xa-coordinator refused it: ${code}: ${String(err.args[2] ?? '')}`);
        return MysqlEdgeErrors.xaNoAnswer(`the xa-coordinator failed (${code})`);
      }
      default:
        throw err;
    }
  }
}
