// Prometheus metrics of the xa-coordinator: transactions by decision, journal fsyncs and records,
// recovery passes and the branches they settled, in-doubt branches seen by the last pass.
import type { MetricsRegistry } from '@dbproxy/observability';
import type { JournalStats } from './journal/decision-journal';

export class XaMetrics {
  private readonly transactions;
  private readonly duration;
  private readonly passes;
  private readonly recovered;
  private readonly inDoubt;

  constructor(metrics: MetricsRegistry, journalStats: () => JournalStats | undefined) {
    this.transactions = metrics.counter({ name: 'dbproxy_xa_transactions_total', help: 'XA transactions run, by decision', labelNames: ['decision'] });
    this.duration = metrics.histogram({ name: 'dbproxy_xa_transaction_seconds', help: 'Time from request to reply of an XA transaction', labelNames: ['decision'] });
    this.passes = metrics.counter({ name: 'dbproxy_xa_recovery_passes_total', help: 'Recovery passes (XA RECOVER on every participant), by result', labelNames: ['result'] });
    this.recovered = metrics.counter({ name: 'dbproxy_xa_recovered_branches_total', help: 'Prepared branches of this coordinator settled by recovery or an operator, by action', labelNames: ['action'] });
    this.inDoubt = metrics.gauge({ name: 'dbproxy_xa_in_doubt_branches', help: 'Prepared branches found by the last recovery pass (this coordinator and others)', labelNames: ['owner'] });
    // the journal counts; each scrape hands its totals to a counter
    metrics.counter({
      name: 'dbproxy_xa_journal_fsyncs_total',
      help: 'fsyncs of the decision journal (commit decisions / fsyncs = the group commit factor)',
      collect() {
        this.reset();
        this.inc(journalStats()?.fsyncs ?? 0);
      },
    });
    metrics.counter({
      name: 'dbproxy_xa_journal_decisions_total',
      help: 'Commit decisions written to the journal',
      collect() {
        this.reset();
        this.inc(journalStats()?.durableRecords ?? 0);
      },
    });
  }

  transaction(decision: 'commit' | 'rollback', seconds: number): void {
    this.transactions.inc({ decision });
    this.duration.observe({ decision }, seconds);
  }

  recoveryPass(result: 'complete' | 'partial'): void {
    this.passes.inc({ result });
  }

  settled(action: 'commit' | 'rollback'): void {
    this.recovered.inc({ action });
  }

  inDoubtBranches(ours: number, foreign: number): void {
    this.inDoubt.set({ owner: 'self' }, ours);
    this.inDoubt.set({ owner: 'other' }, foreign);
  }
}
