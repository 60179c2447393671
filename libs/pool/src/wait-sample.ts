// The most recent acquire wait times of a pool, in a fixed ring (no allocation per acquire), for
// the p50/p95/p99 of GET /pools. Quantiles are computed only when asked for.

/** Acquires the quantiles are taken over. */
export const WAIT_SAMPLE_SIZE = 512;

export interface WaitQuantiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

export class WaitSample {
  private readonly ring = new Float64Array(WAIT_SAMPLE_SIZE);
  private count = 0;
  private next = 0;

  record(waitMs: number): void {
    this.ring[this.next] = waitMs;
    this.next = (this.next + 1) % WAIT_SAMPLE_SIZE;
    if (this.count < WAIT_SAMPLE_SIZE) this.count++;
  }

  /** Nearest-rank quantiles in ms (0 before any acquire), rounded to 0.01 ms. */
  quantiles(): WaitQuantiles {
    if (this.count === 0) return { p50: 0, p95: 0, p99: 0 };
    const sorted = this.ring.slice(0, this.count).sort();
    const at = (q: number) => Math.round((sorted[Math.min(this.count - 1, Math.ceil(q * this.count) - 1)] as number) * 100) / 100;
    return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
  }
}
