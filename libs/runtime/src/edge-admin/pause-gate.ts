// Pause of one edge process (PgBouncer PAUSE): a statement that would start new work waits while
// the edge is paused, until resume, or fails once it waited longer than the hold timeout.
// Statements of running transactions are not held (the session decides what starts new work).

interface Held {
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** The statement waited longer than the pause's hold timeout. */
export class PauseHoldTimeout extends Error {
  constructor(readonly seconds: number) {
    super(`the proxy is paused by an administrator; the statement waited ${seconds} s (proxy.pause_timeout_seconds) and was not run`);
  }
}

export class PauseGate {
  /** Read on every statement: a plain field, no call. */
  paused = false;
  private holdMs = 0;
  private readonly held = new Set<Held>();

  pause(holdMs: number): void {
    this.paused = true;
    this.holdMs = holdMs;
  }

  /** Releases every held statement; returns how many. */
  resume(): number {
    this.paused = false;
    const released = this.held.size;
    for (const h of this.held) {
      clearTimeout(h.timer);
      h.resolve();
    }
    this.held.clear();
    return released;
  }

  /** Statements waiting now. */
  get holding(): number {
    return this.held.size;
  }

  /** Resolves at resume; rejects with PauseHoldTimeout after the hold timeout. Call only while `paused`. */
  hold(): Promise<void> {
    const holdMs = this.holdMs;
    return new Promise<void>((resolve, reject) => {
      const entry: Held = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.held.delete(entry);
          reject(new PauseHoldTimeout(Math.round(holdMs / 100) / 10));
        }, holdMs),
      };
      this.held.add(entry);
    });
  }
}
