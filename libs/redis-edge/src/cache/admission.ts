// Fill admission (spec 002): every fill costs a CLIENT CACHING YES, a stored copy and a key the
// server tracks, so fills are admitted by the hit ratio of recent lookups, counted per key count
// (one shape cannot starve another): full admission while one lookup in eight hits; below that the
// square of (8 x ratio), so admission falls faster than the ratio (a workload without locality, whose
// few hits come from the fills themselves, settles at the floor instead of refilling a third of its
// misses); floored at one key in 64 (one GET in 64, one 8-key MGET in 512), which still finds a hot
// set when one appears. Spec 002 floors at one key in eight; measured, that floor alone cost a
// no-locality GET workload about 20 % more proxy CPU (libs/redis-edge/README.md, reply cache).

export const MAX_CACHED_KEYS = 64;
/** Lookups per key count after which the counts are halved (a recent window: short, so a shift from a hot set to no locality stops filling within a few thousand lookups). */
const WINDOW = 1024;
const FULL_RATIO = 1 / 8;
/** The floor: one key filled per this many lookups of a key count. */
const FLOOR_LOOKUPS_PER_KEY = 64;
/** Below this many recent lookups of a key count the ratio says nothing yet: every miss fills (a cold cache warms up). */
const WARM_UP = 64;

export class FillAdmission {
  private readonly lookups = new Float64Array(MAX_CACHED_KEYS + 1);
  private readonly hits = new Float64Array(MAX_CACHED_KEYS + 1);
  /** Admission credit per key count: a fill is admitted each time it reaches 1 (deterministic sampling). */
  private readonly credit = new Float64Array(MAX_CACHED_KEYS + 1);

  /** A lookup of `keys` keys (1 for GET) hit or missed. */
  record(keys: number, hit: boolean): void {
    if (++this.lookups[keys] >= WINDOW) {
      this.lookups[keys] /= 2;
      this.hits[keys] /= 2;
    }
    if (hit) this.hits[keys]++;
  }

  /** The share of misses of this key count that may fill now. */
  rate(keys: number): number {
    const lookups = this.lookups[keys];
    if (lookups < WARM_UP) return 1;
    const ratio = this.hits[keys] / lookups;
    if (ratio >= FULL_RATIO) return 1;
    const scaled = ratio / FULL_RATIO;
    return Math.max(scaled * scaled, 1 / (FLOOR_LOOKUPS_PER_KEY * keys));
  }

  /** Whether this miss of `keys` keys may arm a fill. */
  admit(keys: number): boolean {
    const credit = this.credit[keys] + this.rate(keys);
    if (credit >= 1) {
      this.credit[keys] = credit - 1;
      return true;
    }
    this.credit[keys] = credit;
    return false;
  }
}
