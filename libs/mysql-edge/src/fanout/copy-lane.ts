// The concurrency bound of one fanout in one process: at most `limit` copies in flight, the rest
// wait in arrival order; a waiter whose deadline passes leaves the line without being sent.

interface Waiter {
  readonly grant: (granted: boolean) => void;
  timer: NodeJS.Timeout | null;
}

export class CopyLane {
  private inFlight = 0;
  /** The most copies in flight at once since the lane was made (metric, and what tests observe). */
  maxInFlight = 0;
  private readonly waiters: Waiter[] = [];

  constructor(public limit: number) {}

  get running(): number {
    return this.inFlight;
  }

  /** Resolves true when the copy may start (then call done()), false when `deadline` (epoch ms) passed first. */
  enter(deadline: number): Promise<boolean> {
    if (this.inFlight < this.limit && this.waiters.length === 0) {
      this.started();
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = { grant: resolve, timer: null };
      waiter.timer = setTimeout(() => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(false);
      }, Math.max(0, deadline - Date.now()));
      this.waiters.push(waiter);
    });
  }

  /** A copy ended: the next waiter starts. */
  done(): void {
    this.inFlight--;
    while (this.inFlight < this.limit) {
      const next = this.waiters.shift();
      if (next === undefined) return;
      if (next.timer !== null) clearTimeout(next.timer);
      this.started();
      next.grant(true);
    }
  }

  private started(): void {
    this.inFlight++;
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight;
  }
}
