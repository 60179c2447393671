// The client mysql-edge uses to run one DML statement as an XA transaction: a request on
// dbproxy.xa.execute to whichever coordinator serves it. The contract: a resolved promise means
// the commit decision is durable in the coordinator's journal; any error (rollback, timeout, no
// coordinator, coordinator died) means the edge must answer the client with an ERR.
import { requestMessage, Subjects, type Bus, type XaExecuteReply } from '@dbproxy/bus';
import { DbproxyError } from '@dbproxy/util';
import { XaErrors } from './errors';

export interface XaParticipant {
  readonly shard: string;
  readonly backend: string;
  /** This participant's own statement text (e.g. a rewritten copy), else the request's. */
  readonly statement?: string;
}

export interface XaResult {
  readonly xid: string;
  /** Sum of the affected rows over the participants. */
  readonly affectedRows: number;
  /** False when the decision is commit but some participant's XA COMMIT was not confirmed yet (recovery completes it). */
  readonly allConfirmed: boolean;
  readonly outcomes: XaExecuteReply['outcomes'];
}

export interface XaClientOptions {
  /** Who asks (an edge instance id); travels in the request. */
  readonly requestedBy: string;
  /** Time beyond the phase-one deadline the reply may take (phase two); default 10 000 ms. */
  readonly commitAllowanceMs?: number;
}

/** Rejection of a rolled-back transaction; `outcomes` holds each participant's result and error. */
export type XaAborted = DbproxyError & { outcomes: XaExecuteReply['outcomes']; xid: string };

export class XaClient {
  constructor(
    private readonly bus: Bus,
    private readonly options: XaClientOptions,
  ) {}

  /** Resolves when the coordinator decided commit; rejects with DBP_ERR_XA_ABORTED (outcomes attached) or the bus error otherwise. */
  async execute(request: { statement: string; participants: readonly XaParticipant[]; deadlineMs: number }): Promise<XaResult> {
    const reply = await requestMessage(
      this.bus,
      Subjects.xaExecute,
      {},
      { requestedBy: this.options.requestedBy, statement: request.statement, participants: request.participants.map((p) => ({ ...p })), deadlineMs: request.deadlineMs },
      { timeoutMs: request.deadlineMs + (this.options.commitAllowanceMs ?? 10_000) },
    );
    if (reply.decision === 'rollback') {
      const err = XaErrors.aborted(reply.xid) as XaAborted;
      err.outcomes = reply.outcomes;
      err.xid = reply.xid;
      throw err;
    }
    return {
      xid: reply.xid,
      affectedRows: reply.outcomes.reduce((n, o) => n + (o.affectedRows ?? 0), 0),
      allConfirmed: reply.outcomes.every((o) => o.outcome === 'committed'),
      outcomes: reply.outcomes,
    };
  }
}
