// One XA transaction across shard primaries: phase one (XA START, statement, XA END, XA PREPARE
// on every participant, bounded concurrency, within the deadline), the decision (commit only when
// every branch prepared; journalled and fsynced before any XA COMMIT), phase two, and the reply.
import type { Connection } from 'mysql2/promise';
import type { XaExecuteReply, XaExecuteRequest } from '@dbproxy/bus';
import { forEachBounded } from './bounded';
import { XaErrors } from './errors';
import type { FaultHook } from './fault-hook';
import type { DecisionJournal } from './journal/decision-journal';
import { participantError, type ParticipantError } from './participant-error';
import { UNTRACED, type PhaseRunner } from './phase-spans';
import type { MysqlBackend, ParticipantConnections } from './participants/participant-connections';
import { commitBranch, prepareBranch, rollbackBranch } from './participants/xa-statements';
import type { XaSettings } from './settings';
import { assertSingleDml } from './statement-check';
import { branchOf, type BranchXid, type XidFactory } from './xid';

type Outcome = XaExecuteReply['outcomes'][number];

interface Branch {
  readonly shard: string;
  readonly backend: MysqlBackend;
  readonly statement: string;
  readonly xid: BranchXid;
  state: 'idle' | 'started' | 'prepared' | 'failed';
  conn?: Connection;
  affectedRows?: number;
  error?: ParticipantError;
}

export interface TwoPhaseCommitDeps {
  readonly settings: XaSettings;
  readonly journal: DecisionJournal;
  readonly xids: XidFactory;
  readonly connections: ParticipantConnections;
  readonly backends: () => readonly MysqlBackend[];
  readonly fault: FaultHook;
  /** Gtrids being run now: recovery leaves their branches alone. */
  readonly inFlight: Set<string>;
}

function resolveBranches(request: XaExecuteRequest, backends: readonly MysqlBackend[], gtrid: string): Branch[] {
  return request.participants.map((p, i) => {
    const backend = backends.find((b) => b.name === p.backend && b.shard === p.shard && b.role === 'primary');
    if (!backend) throw XaErrors.unknownParticipant(p.backend, p.shard);
    const statement = p.statement ?? request.statement;
    assertSingleDml(statement);
    return { shard: p.shard, backend, statement, xid: branchOf(gtrid, i), state: 'idle' };
  });
}

export class TwoPhaseCommit {
  constructor(private readonly deps: TwoPhaseCommitDeps) {}

  /** Runs `request` as one XA transaction; `receivedAt` starts its deadline; `phases` traces each participant's phases. */
  async execute(request: XaExecuteRequest, receivedAt = Date.now(), phases: PhaseRunner = UNTRACED): Promise<XaExecuteReply> {
    const { settings, xids, inFlight } = this.deps;
    if (inFlight.size >= settings.maxInFlight) throw XaErrors.busy(settings.maxInFlight);
    const gtrid = xids.next();
    const branches = resolveBranches(request, this.deps.backends(), gtrid);
    const deadline = receivedAt + Math.min(request.deadlineMs, settings.decisionTimeoutMs);
    inFlight.add(gtrid);
    try {
      await this.prepareAll(gtrid, branches, deadline, phases);
      const commit = branches.every((b) => b.state === 'prepared');
      const outcomes = commit ? await this.commitAll(gtrid, branches, phases) : await this.rollbackAll(branches, phases);
      return { xid: gtrid, decision: commit ? 'commit' : 'rollback', outcomes };
    } finally {
      inFlight.delete(gtrid);
      for (const b of branches) if (b.conn) this.deps.connections.release(b.backend, b.conn, b.state !== 'failed');
    }
  }

  private async prepareAll(gtrid: string, branches: Branch[], deadline: number, phases: PhaseRunner): Promise<void> {
    const failed = () => branches.some((b) => b.state === 'failed');
    await forEachBounded(
      branches,
      this.deps.settings.participantConcurrency,
      async (b) => {
        try {
          b.state = 'started';
          b.affectedRows = await phases.run('XA PREPARE', b.shard, b.backend, async () => {
            b.conn = await this.deps.connections.acquire(b.backend);
            return prepareBranch({
              conn: b.conn,
              xid: b.xid,
              statement: b.statement,
              deadline,
              beforePrepare: () => this.deps.fault.reach('before-prepare', gtrid),
            });
          });
          b.state = 'prepared';
          await this.deps.fault.reach('after-prepare', gtrid);
        } catch (err) {
          b.state = 'failed';
          b.error = participantError(err);
        }
      },
      failed,
    );
  }

  private async commitAll(gtrid: string, branches: Branch[], phases: PhaseRunner): Promise<Outcome[]> {
    const { journal, fault, settings } = this.deps;
    await journal.recordCommit({ xid: gtrid, branches: branches.map((b, i) => ({ shard: b.shard, backend: b.backend.name, bqual: String(i) })), at: Date.now() });
    await fault.reach('after-decision', gtrid);
    const outcomes: Outcome[] = new Array(branches.length);
    const deadline = Date.now() + settings.decisionTimeoutMs;
    await forEachBounded(branches, settings.participantConcurrency, async (b, i) => {
      const base = { shard: b.shard, backend: b.backend.name, affectedRows: b.affectedRows ?? 0 };
      try {
        await phases.run('XA COMMIT', b.shard, b.backend, () => commitBranch(b.conn as Connection, b.xid, deadline));
        outcomes[i] = { ...base, outcome: 'committed' };
        await fault.reach('after-commit', gtrid);
      } catch (err) {
        b.state = 'failed'; // recovery commits it from the journal
        outcomes[i] = { ...base, outcome: 'unknown', error: participantError(err) };
      }
    });
    if (outcomes.every((o) => o.outcome === 'committed')) void journal.recordDone(gtrid).catch(() => undefined);
    return outcomes;
  }

  /** Presumed abort: nothing is journalled; prepared branches are rolled back, the others die with their connection. */
  private async rollbackAll(branches: Branch[], phases: PhaseRunner): Promise<Outcome[]> {
    const deadline = Date.now() + this.deps.settings.decisionTimeoutMs;
    const outcomes: Outcome[] = new Array(branches.length);
    await forEachBounded(branches, this.deps.settings.participantConcurrency, async (b, i) => {
      const base = { shard: b.shard, backend: b.backend.name };
      if (b.state === 'failed') {
        outcomes[i] = { ...base, outcome: 'failed', ...(b.error ? { error: b.error } : {}) };
        return;
      }
      if (b.state !== 'prepared') {
        outcomes[i] = { ...base, outcome: 'rolled-back' };
        return;
      }
      try {
        await phases.run('XA ROLLBACK', b.shard, b.backend, () => rollbackBranch(b.conn as Connection, b.xid, deadline));
        outcomes[i] = { ...base, outcome: 'rolled-back' };
      } catch (err) {
        b.state = 'failed'; // a prepared branch without a decision: recovery rolls it back
        outcomes[i] = { ...base, outcome: 'unknown', error: participantError(err) };
      }
    });
    return outcomes;
  }
}
