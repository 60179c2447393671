// Which backend serves a shard in a role right now: the topology service's usable backends
// (healthy, not lagging, not shunned, not draining), the weighted replica choice within the lowest
// pressure band, and a short local memory of replicas this process just failed to reach (so reads
// fall back at once instead of waiting for the next health check to notice).
import { ReplicaSelector, type ReplicaCandidate } from '@dbproxy/routing';
import type { DbproxyError } from '@dbproxy/util';
import type { BackendState, TopologyView } from '@dbproxy/topology-client';
import { noBackendError } from './no-backend';

/** How busy a backend's pool is for the asking session: (in use + waiters) / capacity. */
export type PressureOf = (backend: string) => number;

export class BackendDirectory {
  private readonly selector: ReplicaSelector;
  private readonly suspects = new Map<string, number>();
  private readonly candidates: ReplicaCandidate[] = [];
  /** Whether the last choose() sent a read to the primary because no replica was usable. */
  fellBack = false;

  constructor(
    private readonly view: () => TopologyView,
    margin: number,
    private readonly suspectMs: number,
  ) {
    this.selector = new ReplicaSelector({ margin });
  }

  /** The shard's usable primary, or undefined. */
  primary(shard: string): BackendState | undefined {
    return this.view().usable(shard, 'primary')[0];
  }

  /**
   * A usable replica by weight within the lowest pressure band; the primary when none and
   * `fallback` (then `fellBack` is set until the next call). Synchronous: read `fellBack` at once.
   */
  choose(shard: string, role: 'primary' | 'replica', fallback: boolean, pressure: PressureOf, now: number, prefer?: (backend: string) => boolean): BackendState | undefined {
    this.fellBack = false;
    if (role === 'replica') {
      const replica = this.replica(shard, pressure, now, prefer);
      if (replica) return replica;
      if (!fallback) return undefined;
    }
    const primary = this.primary(shard);
    this.fellBack = primary !== undefined && role === 'replica';
    return primary;
  }

  /** The error for a choose() that found nothing, naming each backend tried and why it is out. */
  unusable(shard: string, role: 'primary' | 'replica', fallback: boolean, now: number): DbproxyError {
    return noBackendError(this.view(), shard, role, fallback && role === 'replica', (name) => this.suspect(name, now));
  }

  /** This process could not reach `backend`: keep reads away from it for a while. */
  markFailed(backend: string, now: number): void {
    this.suspects.set(backend, now + this.suspectMs);
  }

  /** It worked again (a connection opened). */
  markReachable(backend: string): void {
    if (this.suspects.size > 0) this.suspects.delete(backend);
  }

  private suspect(name: string, now: number): boolean {
    if (this.suspects.size === 0) return false;
    const until = this.suspects.get(name);
    if (until === undefined) return false;
    if (until > now) return true;
    this.suspects.delete(name);
    return false;
  }

  /** With `prefer` (causal reads: replicas known to have applied the session's write), only those while any is usable. */
  private replica(shard: string, pressure: PressureOf, now: number, prefer?: (backend: string) => boolean): BackendState | undefined {
    const usable = this.view().usable(shard, 'replica');
    if (usable.length === 0) return undefined;
    if (usable.length === 1) {
      const only = usable[0] as BackendState;
      return this.suspect(only.name, now) ? undefined : only;
    }
    const candidates = this.candidates;
    candidates.length = 0;
    for (const state of usable) {
      if (this.suspect(state.name, now)) continue;
      candidates.push({ name: state.name, weight: state.weight, inUse: pressure(state.name) * 1000, waiters: 0, capacity: 1000 });
    }
    if (prefer !== undefined && candidates.length > 1) keepPreferred(candidates, prefer);
    const name = candidates.length > 0 ? this.selector.pick(candidates) : undefined;
    if (name === undefined) return undefined;
    for (const state of usable) if (state.name === name) return state;
    return undefined;
  }
}

/** Drops the candidates `prefer` rejects, unless it rejects them all (then any may serve, after a wait). */
function keepPreferred(candidates: ReplicaCandidate[], prefer: (backend: string) => boolean): void {
  let kept = 0;
  for (const c of candidates) if (prefer(c.name)) candidates[kept++] = c;
  if (kept > 0) candidates.length = kept;
}
