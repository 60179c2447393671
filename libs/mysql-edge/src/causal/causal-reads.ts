// Causal reads ([mysql] read_consistency = "causal"): what one edge process knows and counts. A
// session remembers the GTID its last write committed as (last_gtid, tracked in the OK packet);
// a read on a replica first checks that replica has applied it: at once from what this process
// learned before, else with MASTER_GTID_WAIT up to causal_wait_ms on the replica's connection
// (run before the read), else the read goes to the primary.
import type { Counter, Histogram } from 'prom-client';
import { zeroSeries, type MetricsRegistry } from '@dbproxy/observability';
import type { ResponseSummary } from '@dbproxy/protocol-mysql';
import { advance, gtidText, parseGtids, reaches, type GtidPosition } from './gtid-position';

export type CausalOutcome = 'replica_now' | 'replica_after_wait' | 'primary';
export const CAUSAL_OUTCOMES: readonly CausalOutcome[] = ['replica_now', 'replica_after_wait', 'primary'];

/** Run on every backend connection in causal mode (and again after COM_RESET_CONNECTION, which restores the global value). */
export const TRACK_LAST_GTID = "SET SESSION session_track_system_variables = CONCAT_WS(',', @@session.session_track_system_variables, 'last_gtid')";

const WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class CausalReads {
  /** What each replica is known to have applied (from topology's health checks and this process's waits; only grows). */
  private readonly applied = new Map<string, GtidPosition>();
  private readonly outcomes: Counter<'protocol' | 'outcome'>;
  private readonly waits: Histogram<'protocol' | 'outcome'>;

  constructor(metrics: MetricsRegistry) {
    this.outcomes = metrics.counter({ name: 'dbproxy_causal_reads_total', help: 'Reads of sessions with a write to see (read_consistency = "causal"), by where they ran: on a replica at once, on a replica after waiting for it, or on the primary', labelNames: ['protocol', 'outcome'] });
    this.waits = metrics.histogram({ name: 'dbproxy_causal_wait_seconds', help: 'Time causal reads waited for a replica to apply the session\'s last write (caught up, or timed out and went to the primary)', labelNames: ['protocol', 'outcome'], buckets: WAIT_BUCKETS });
    zeroSeries(this.outcomes, { protocol: ['mysql'], outcome: CAUSAL_OUTCOMES });
  }

  /** True when `backend` is known to have applied `target` (no wait needed). */
  known(backend: string, target: GtidPosition): boolean {
    return reaches(this.applied.get(backend), target);
  }

  /** `backend` applied `target` (a wait on it returned). */
  learned(backend: string, target: GtidPosition): void {
    let position = this.applied.get(backend);
    if (position === undefined) this.applied.set(backend, (position = new Map()));
    advance(position, target);
  }

  /**
   * Topology checked `backend` and saw `position` (its gtid_current_pos): a read whose target it
   * includes goes there without a wait. Positions only grow, so an older report never misleads;
   * text that is no MariaDB GTID list (MySQL's gtid_executed) adds nothing.
   */
  observed(backend: string, position: string | null): void {
    if (position === null || position === '') return;
    const parsed = parseGtids(position);
    if (parsed.size > 0) this.learned(backend, parsed);
  }

  count(outcome: CausalOutcome): void {
    this.outcomes.inc({ protocol: 'mysql', outcome });
  }

  waited(outcome: CausalOutcome, seconds: number): void {
    this.waits.observe({ protocol: 'mysql', outcome }, seconds);
  }
}

/**
 * The wait run on a replica before a causal read: one row when the replica already has `target`
 * plus one when it has it once the wait returns (so 2 = at once, 1 = after waiting, 0 = timed out).
 */
export function waitQuery(target: GtidPosition, waitMs: number): string {
  const gtids = gtidText(target); // digits, dashes and commas only (parseGtids)
  return `SELECT 1 FROM DUAL WHERE MASTER_GTID_WAIT('${gtids}', 0) = 0 UNION ALL SELECT 1 FROM DUAL WHERE MASTER_GTID_WAIT('${gtids}', ${(waitMs / 1000).toFixed(3)}) = 0`;
}

export function waitOutcome(rows: number): CausalOutcome {
  return rows >= 2 ? 'replica_now' : rows === 1 ? 'replica_after_wait' : 'primary';
}

/** The GTID a response's OK packet reports for the session's last commit (last_gtid session tracking); null when none. */
export function lastGtidOf(summary: ResponseSummary): GtidPosition | null {
  let found: GtidPosition | null = null;
  for (const change of summary.sessionState) {
    if (change.type !== 'system-variable' || change.name !== 'last_gtid' || change.value === '') continue;
    const position = parseGtids(change.value);
    if (position.size > 0) found = position;
  }
  return found;
}

/** A session-state change report that carries only last_gtid leaves nothing to reset on the connection. */
export function onlyLastGtid(summary: ResponseSummary): boolean {
  if (summary.sessionState.length === 0) return false;
  for (const change of summary.sessionState) {
    if (change.type === 'system-variable' && change.name === 'last_gtid') continue;
    return false;
  }
  return true;
}
