// The deployment state machine as a pure function (spec 001 "ProxySQL State Machine" and "Phase
// Actions"): given the stored phase and one poll, what kind of step the worker takes.
import { phaseOfStatus, rank, type BgdPhase } from './phases';
import { classify, type PollOutcome } from './topology-observation';

export type Step =
  /** Same phase again: only same-phase reconciliation (retry resolution, pin newly resolved pairs). */
  | { readonly kind: 'equal'; readonly phase: BgdPhase }
  /** Raw SWITCHOVER_COMPLETED after the local state advanced past writer completion: ignored. */
  | { readonly kind: 'ignore'; readonly why: string }
  /** A later phase (states may be skipped); WRITER_SWITCHOVER_COMPLETED continues to READER_SWITCHOVER_IN_PROGRESS. */
  | { readonly kind: 'forward'; readonly to: BgdPhase; readonly status: string }
  /** A recognized lower status or an unknown one from an active state: rollback, then AVAILABLE or NONE. */
  | { readonly kind: 'backward'; readonly to: BgdPhase; readonly status: string }
  /** Empty status, missing target row, or not blue/green: NONE and baseline interval, no rollback helper. */
  | { readonly kind: 'reset'; readonly why: string }
  /** The topology drained (empty table or table absent): cleanup chosen from the stored phase. */
  | { readonly kind: 'drained'; readonly cleanup: 'success' | 'rollback' | 'none'; readonly absent: boolean }
  /** The query failed: nothing changes, the outcome is counted and logged. */
  | { readonly kind: 'query-error'; readonly detail: string };

/** Cleanup after the topology drained: success from READER_SWITCHOVER_IN_PROGRESS, rollback from any other active state. */
export function drainedCleanup(phase: BgdPhase): 'success' | 'rollback' | 'none' {
  if (phase === 'NONE') return 'none';
  return phase === 'READER_SWITCHOVER_IN_PROGRESS' ? 'success' : 'rollback';
}

/** The step the worker takes from `phase` on `outcome`. */
export function nextStep(phase: BgdPhase, outcome: PollOutcome): Step {
  switch (outcome.kind) {
    case 'absent':
      return { kind: 'drained', cleanup: drainedCleanup(phase), absent: true };
    case 'empty':
      return { kind: 'drained', cleanup: drainedCleanup(phase), absent: false };
    case 'query-error':
      return { kind: 'query-error', detail: outcome.detail };
    case 'rows':
      break;
  }
  const classified = classify(outcome.rows, outcome.columns);
  if (!classified.blueGreen) return { kind: 'reset', why: `topology is not blue/green (${classified.why})` };
  const status = classified.target?.status;
  if (status === undefined) return { kind: 'reset', why: 'no target row' };
  if (status === '') return { kind: 'reset', why: 'empty target status' };
  const to = phaseOfStatus(status);
  if (to === 'WRITER_SWITCHOVER_COMPLETED' && rank(phase) > rank(to)) return { kind: 'ignore', why: 'writer completion already handled' };
  if (to === phase) return { kind: 'equal', phase };
  if (rank(to) > rank(phase)) return { kind: 'forward', to, status };
  // Lower than the stored state, or unknown (NONE) from an active state.
  return { kind: 'backward', to, status };
}
