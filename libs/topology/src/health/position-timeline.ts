// When the primary first showed each replication position: a replica that has not reached a
// position the primary had at time T is at least (now - T) behind. Works for any position that
// only grows (LSN, Redis offset, GTID transaction count) and needs no clock on the servers.

interface Sample {
  readonly progress: bigint;
  readonly at: number;
}

export class PositionTimeline {
  private samples: Sample[] = [];

  constructor(
    private readonly maxSamples = 4096,
    private readonly maxAgeMs = 3_600_000,
  ) {}

  /** Records the primary's position seen at `at` (ms). A position that went backwards (a new primary, a reset) restarts the timeline. */
  record(progress: bigint, at: number): void {
    const last = this.samples[this.samples.length - 1];
    if (last && progress < last.progress) this.samples = [];
    else if (last && progress === last.progress) return;
    this.samples.push({ progress, at });
    const oldest = at - this.maxAgeMs;
    let drop = Math.max(0, this.samples.length - this.maxSamples);
    while (drop < this.samples.length - 1 && (this.samples[drop] as Sample).at < oldest) drop++;
    if (drop > 0) this.samples.splice(0, drop);
  }

  reset(): void {
    this.samples = [];
  }

  /**
   * Seconds a replica at `progress` (observed at `at`) is behind at least: since the first time the
   * primary was seen past it; 0 when it has everything seen; null when the primary was never seen.
   */
  stalenessSeconds(progress: bigint | null, at: number): number | null {
    if (progress === null || this.samples.length === 0) return null;
    let lo = 0;
    let hi = this.samples.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.samples[mid] as Sample).progress > progress) hi = mid;
      else lo = mid + 1;
    }
    const firstAhead = this.samples[lo];
    return firstAhead ? Math.max(0, at - firstAhead.at) / 1000 : 0;
  }
}
