// The monitor's phases (spec 001 "ProxySQL State Machine"), their order, the AWS target statuses
// they correspond to, and the polling interval each phase asks for.
import { BgdPhase } from '@dbproxy/bus';

export { BgdPhase };

/** Nominal lifecycle order; a higher rank is "later". NONE is lowest. */
export const PHASE_ORDER: readonly BgdPhase[] = BgdPhase.options; // the bus schema lists them in lifecycle order

export const rank = (phase: BgdPhase): number => PHASE_ORDER.indexOf(phase);

/** AWS target statuses of mysql.rds_topology and the phase each converts to. */
export const STATUS_PHASE: Readonly<Record<string, BgdPhase>> = {
  AVAILABLE: 'AVAILABLE',
  SWITCHOVER_INITIATED: 'WRITER_SWITCHOVER_INITIATED',
  SWITCHOVER_IN_PROGRESS: 'WRITER_SWITCHOVER_IN_PROGRESS',
  SWITCHOVER_IN_POST_PROCESSING: 'WRITER_SWITCHOVER_POST_PROCESSING',
  SWITCHOVER_COMPLETED: 'WRITER_SWITCHOVER_COMPLETED',
};

/** An unknown nonempty status converts to NONE (and from a higher state, rolls back). */
export function phaseOfStatus(status: string): BgdPhase {
  return STATUS_PHASE[status] ?? 'NONE';
}

/** Phases during which topology's ordinary read_only observations must not move placement. */
export const SUPPRESSING_PHASES: ReadonlySet<BgdPhase> = new Set(['WRITER_SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_IN_PROGRESS', 'WRITER_SWITCHOVER_POST_PROCESSING']);

/** Phases in which unresolved green IPs are retried on every equal-phase observation. */
export const RESOLVING_PHASES: ReadonlySet<BgdPhase> = new Set(['AVAILABLE', ...SUPPRESSING_PHASES]);

export const AVAILABLE_INTERVAL_MS = 250;
export const ACTIVE_WRITER_INTERVAL_MS = 100;

/** 250 ms in AVAILABLE, 100 ms in the active writer phases, the configured baseline otherwise. */
export function intervalFor(phase: BgdPhase, baselineMs: number): number {
  if (phase === 'AVAILABLE') return AVAILABLE_INTERVAL_MS;
  if (SUPPRESSING_PHASES.has(phase)) return ACTIVE_WRITER_INTERVAL_MS;
  return baselineMs;
}
