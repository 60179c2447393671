// Causal reads in transaction mode ([postgres] read_consistency = "causal"): after a unit that
// wrote ends its transaction, the session asks the primary (same connection, before the client
// hears ReadyForQuery) for pg_current_wal_lsn(), which is at or past the commit's LSN; a later read
// runs on a replica whose pg_last_wal_replay_lsn() reached it: at once when this process saw it
// there before, else after polling it up to causal_wait_ms, else on the primary.
import { performance } from 'node:perf_hooks';
import type { Counter, Histogram } from 'prom-client';
import { zeroSeries, type MetricsRegistry } from '@dbproxy/observability';
import type { PgBackendConnection } from './backend-connection';

export type CausalOutcome = 'replica_now' | 'replica_after_wait' | 'primary';

const LSN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;
const POLL_MS = 2;
const WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** "16/B374D848" as a number (null when it is not an LSN). */
export function parseLsn(text: string | null | undefined): bigint | null {
  const m = text ? LSN.exec(text) : null;
  return m ? (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`) : null;
}

export function lsnText(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Per process: what each replica is known to have replayed (topology's health checks and this process's own polls), and the metrics. */
export class ReplayPositions {
  private readonly replayed = new Map<string, bigint>();
  private readonly outcomes: Counter<'protocol' | 'outcome'>;
  private readonly waits: Histogram<'protocol' | 'outcome'>;

  constructor(metrics: MetricsRegistry) {
    this.outcomes = metrics.counter({ name: 'dbproxy_causal_reads_total', help: 'Reads of sessions with a write to see (read_consistency = "causal"), by where they ran: on a replica at once, on a replica after waiting for it, or on the primary', labelNames: ['protocol', 'outcome'] });
    this.waits = metrics.histogram({ name: 'dbproxy_causal_wait_seconds', help: 'Time causal reads waited for a replica to apply the session\'s last write (caught up, or timed out and went to the primary)', labelNames: ['protocol', 'outcome'], buckets: WAIT_BUCKETS });
    zeroSeries(this.outcomes, { protocol: ['pg'], outcome: ['replica_now', 'replica_after_wait', 'primary'] });
  }

  known(backend: string, target: bigint): boolean {
    return (this.replayed.get(backend) ?? -1n) >= target;
  }

  learned(backend: string, lsn: bigint): void {
    if ((this.replayed.get(backend) ?? -1n) < lsn) this.replayed.set(backend, lsn);
  }

  /** Topology checked `backend` and saw `position` (pg_last_wal_replay_lsn() on a replica): positions only grow, so an older report never misleads. */
  observed(backend: string, position: string | null): void {
    const lsn = parseLsn(position);
    if (lsn !== null) this.learned(backend, lsn);
  }

  /** Causal reads among several replicas: those known to have replayed `target` (undefined: no target, any replica). */
  caughtUp(target: bigint | undefined): ((backend: string) => boolean) | undefined {
    return target === undefined ? undefined : (backend) => this.known(backend, target);
  }

  count(outcome: CausalOutcome): void {
    this.outcomes.inc({ protocol: 'pg', outcome });
  }

  waited(outcome: CausalOutcome, seconds: number): void {
    this.waits.observe({ protocol: 'pg', outcome }, seconds);
  }
}

/** The primary's WAL position now (at or past the session's commit); null when it cannot be read (the window then applies). */
export async function currentWalLsn(conn: PgBackendConnection, timeoutMs: number): Promise<bigint | null> {
  const answer = await conn.firstRow('SELECT pg_current_wal_lsn()::text', [], timeoutMs);
  return 'row' in answer ? parseLsn(answer.row[0]) : null;
}

/**
 * Polls the replica on `conn` until it replayed `target` or `waitMs` passed: the outcome
 * (replica_now: at the first look). A replica that cannot say (an error) counts as not caught up.
 */
export async function awaitReplay(conn: PgBackendConnection, backend: string, target: bigint, waitMs: number, positions: ReplayPositions, timeoutMs: number): Promise<CausalOutcome> {
  const started = performance.now();
  for (let first = true; ; first = false) {
    const answer = await conn.firstRow('SELECT pg_last_wal_replay_lsn()::text', [], timeoutMs);
    const replayed = 'row' in answer ? parseLsn(answer.row[0]) : null;
    if (replayed !== null) positions.learned(backend, replayed);
    const elapsed = performance.now() - started;
    const outcome: CausalOutcome | null = replayed !== null && replayed >= target ? (first ? 'replica_now' : 'replica_after_wait') : elapsed >= waitMs || replayed === null ? 'primary' : null;
    if (outcome !== null) {
      positions.count(outcome);
      if (outcome !== 'replica_now') positions.waited(outcome, elapsed / 1000);
      return outcome;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, waitMs - elapsed))));
  }
}
