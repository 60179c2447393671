// What a topology change means for an edge's existing connections to one backend: retired when
// released (a drain started, the backend went offline_soft or now connects elsewhere), or closed
// now (offline_hard).
import type { BackendState } from './topology-view';

export interface Retirement {
  /** The close reason the edge's pools record (`drain`, `address-changed`, `offline_hard`). */
  readonly reason: 'drain' | 'address-changed' | 'offline_soft' | 'offline_hard';
  /** Close lent connections under their borrowers too, not only as they come back. */
  readonly now: boolean;
}

const HARD: Retirement = Object.freeze({ reason: 'offline_hard', now: true });
const SOFT: Retirement = Object.freeze({ reason: 'offline_soft', now: false });
const DRAIN: Retirement = Object.freeze({ reason: 'drain', now: false });
const MOVED: Retirement = Object.freeze({ reason: 'address-changed', now: false });

/**
 * The retirement `next` calls for, given the backend's state in the previous snapshot; null when
 * none. Each fires once, when it starts (a drain lasting several snapshots retires once; the
 * connections made afterwards serve the new work a draining primary still takes).
 */
export function retirementOf(next: BackendState, previous: BackendState | undefined): Retirement | null {
  if (next.status === 'offline_hard') return previous?.status === 'offline_hard' ? null : HARD;
  if (next.status === 'offline_soft' && previous?.status !== 'offline_soft') return SOFT;
  if (next.draining && !previous?.draining) return DRAIN;
  if (previous !== undefined && previous.connectAddress !== next.connectAddress) return MOVED;
  return null;
}
