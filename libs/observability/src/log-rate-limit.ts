// Bounds how many lines of one kind a process writes per second, so that a flood (a storm of
// failed logins, thousands of short sessions) cannot make logging the problem. Lines over the
// limit are counted and summed up in one "suppressed K similar lines" line when the second ends.
import type { Logger } from './logging';

interface Window {
  startedAt: number;
  written: number;
  suppressed: number;
  timer: NodeJS.Timeout | undefined;
}

const WINDOW_MS = 1000;

export class LogRateLimit {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly logger: Logger,
    /** Lines per second per kind; 0 = no limit. Read per line, so an epoch can change it. */
    private readonly limit: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a line of `kind` may be written now; false counts it as suppressed. */
  admit(kind: string): boolean {
    const limit = this.limit();
    if (limit <= 0) return true;
    const now = this.now();
    let window = this.windows.get(kind);
    if (window === undefined) this.windows.set(kind, (window = { startedAt: now, written: 0, suppressed: 0, timer: undefined }));
    else if (now - window.startedAt >= WINDOW_MS) {
      this.summarise(kind, window);
      window.startedAt = now;
      window.written = 0;
    }
    if (window.written < limit) {
      window.written++;
      return true;
    }
    if (window.suppressed++ === 0) {
      const open = window;
      open.timer = setTimeout(() => this.summarise(kind, open), Math.max(1, open.startedAt + WINDOW_MS - now));
      open.timer.unref();
    }
    return false;
  }

  /** Writes the pending summaries now (on shutdown). */
  flush(): void {
    for (const [kind, window] of this.windows) this.summarise(kind, window);
  }

  private summarise(kind: string, window: Window): void {
    if (window.timer !== undefined) clearTimeout(window.timer);
    window.timer = undefined;
    if (window.suppressed === 0) return;
    const suppressed = window.suppressed;
    window.suppressed = 0;
    this.logger.warn({ event: kind, suppressed, limit_per_second: this.limit() }, `suppressed ${suppressed} similar lines (${kind})`);
  }
}
