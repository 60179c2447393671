// Weighted, deterministic replica choice inside the lowest pool-pressure band.
import { InvalidReplicaCandidate } from './errors';

/** One replica pool as the selector sees it. */
export interface ReplicaCandidate {
  readonly name: string;
  /** Relative share of reads; 0 takes the replica out of rotation. */
  readonly weight: number;
  readonly inUse: number;
  readonly waiters: number;
  readonly capacity: number;
}

export interface ReplicaSelectorOptions {
  /**
   * How much higher than the least-pressured pool a pool's pressure may be and still share the
   * reads, in units of pressure ((inUse + waiters) / capacity). Default 0.25.
   */
  readonly margin?: number;
}

export const DEFAULT_PRESSURE_MARGIN = 0.25;

/** (inUse + waiters) / capacity; a pool without capacity has infinite pressure. */
export function poolPressure(c: ReplicaCandidate): number {
  return c.capacity > 0 ? (c.inUse + c.waiters) / c.capacity : Number.POSITIVE_INFINITY;
}

function checkCandidate(c: ReplicaCandidate): void {
  const fields: [string, number][] = [
    ['weight', c.weight],
    ['inUse', c.inUse],
    ['waiters', c.waiters],
    ['capacity', c.capacity],
  ];
  for (const [field, value] of fields) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw InvalidReplicaCandidate(`${c.name}: ${field} must be a finite number >= 0, got ${value}`);
    }
  }
}

/**
 * Picks a replica: candidates whose pressure is within `margin` of the lowest pressure form the
 * band; inside the band, smooth weighted round-robin (as in nginx) gives each replica a share of
 * picks proportional to its weight, in a fixed interleaved order. Same inputs, same sequence.
 */
export class ReplicaSelector {
  readonly margin: number;
  private readonly current = new Map<string, number>();

  constructor(options: ReplicaSelectorOptions = {}) {
    const margin = options.margin ?? DEFAULT_PRESSURE_MARGIN;
    if (typeof margin !== 'number' || !Number.isFinite(margin) || margin < 0) {
      throw InvalidReplicaCandidate(`margin must be a finite number >= 0, got ${margin}`);
    }
    this.margin = margin;
  }

  /** The chosen replica's name, or undefined when no candidate has a positive weight. */
  pick(candidates: readonly ReplicaCandidate[]): string | undefined {
    let lowest = Number.POSITIVE_INFINITY;
    for (const c of candidates) {
      checkCandidate(c);
      if (c.weight > 0) lowest = Math.min(lowest, poolPressure(c));
    }
    let total = 0;
    let best: ReplicaCandidate | undefined;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const c of candidates) {
      if (c.weight <= 0 || !this.inBand(poolPressure(c), lowest)) continue;
      const score = (this.current.get(c.name) ?? 0) + c.weight;
      this.current.set(c.name, score);
      total += c.weight;
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    if (best === undefined) return undefined;
    this.current.set(best.name, bestScore - total);
    this.forgetAbsent(candidates);
    return best.name;
  }

  private inBand(pressure: number, lowest: number): boolean {
    return pressure === lowest || pressure <= lowest + this.margin;
  }

  /** Drops rotation state of replicas no longer offered, so the map stays bounded. */
  private forgetAbsent(candidates: readonly ReplicaCandidate[]): void {
    if (this.current.size <= candidates.length) return;
    const offered = new Set(candidates.map((c) => c.name));
    for (const name of this.current.keys()) if (!offered.has(name)) this.current.delete(name);
  }
}
