// Settling one transaction by hand (`dbproxy xa commit|rollback XID`, POST /xa/{xid}/commit|rollback):
// every prepared branch of the gtrid on every primary. For this coordinator's own XIDs the journal
// stays the authority: a manual commit is journalled first, a manual rollback of a journalled
// commit is refused, and a running transaction is left to finish.
import { XaErrors } from './errors';
import type { DecisionJournal } from './journal/decision-journal';
import type { XaMetrics } from './metrics';
import type { XaRecovery } from './recovery';
import { gtridText } from './xid';

export interface SettleReport {
  readonly xid: string;
  readonly action: 'commit' | 'rollback';
  readonly branches: { backend: string; bqual: string; settled: boolean }[];
}

export class OperatorActions {
  constructor(
    private readonly recovery: XaRecovery,
    private readonly journal: DecisionJournal,
    private readonly metrics: XaMetrics,
  ) {}

  async settle(xid: string, action: 'commit' | 'rollback'): Promise<SettleReport> {
    const scan = await this.recovery.scan();
    const matches = scan.raw.map((r, i) => ({ ...r, view: scan.branches[i] as (typeof scan.branches)[number] })).filter((m) => m.view.xid === xid);
    if (matches.length === 0) throw XaErrors.notPrepared(xid);
    if (matches.some((m) => m.view.running)) throw XaErrors.decisionConflict(xid, `${action} while it is running`);
    const ours = matches[0]?.view.ours === true;
    if (ours && action === 'rollback' && this.journal.decision(xid)) throw XaErrors.decisionConflict(xid, 'a manual rollback');
    if (ours && action === 'commit' && !this.journal.decision(xid)) {
      const branches = matches.map((m) => ({ shard: m.backend.shard, backend: m.backend.name, bqual: gtridText(m.xid.bqual) }));
      await this.journal.recordCommit({ xid, branches, at: Date.now() });
    }
    const branches = [];
    for (const m of matches) {
      const settled = await this.recovery.settle(m.backend, m.xid, action);
      if (settled) this.metrics.settled(action);
      branches.push({ backend: m.backend.name, bqual: m.view.bqual, settled });
    }
    if (ours && action === 'commit' && branches.every((b) => b.settled) && scan.unreachable.length === 0) await this.journal.recordDone(xid);
    return { xid, action, branches };
  }
}
