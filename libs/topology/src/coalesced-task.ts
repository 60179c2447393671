// Runs an async task on request, never two at once: every request is answered by a run that
// starts after it was made, requests made before that run starts share it, and runs start at
// least `spacingMs` apart (the debounce of refresh requests).

export class CoalescedTask {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly spacingMs: () => number = () => 0,
  ) {}

  /** Resolves (or rejects) with the outcome of the next run. */
  request(): Promise<void> {
    this.queued ??= this.runNext();
    return this.queued;
  }

  /** Further requests resolve without running the task. */
  stop(): void {
    this.stopped = true;
  }

  private async runNext(): Promise<void> {
    await Promise.resolve(); // let request() store this promise before it is cleared below
    if (this.running) await this.running.catch(() => undefined);
    const wait = this.lastStart + this.spacingMs() - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
    this.queued = undefined;
    if (this.stopped) return;
    this.lastStart = Date.now();
    const run = this.task();
    this.running = run;
    try {
      await run;
    } finally {
      if (this.running === run) this.running = undefined;
    }
  }
}
