// The read-after-write window: after a write, a session's reads go to the primary for a while.
import { InvalidWindow } from './errors';

/**
 * Per-session state. The caller passes the clock (milliseconds) so that this stays a pure value
 * with no timers. A window of 0 disables the rule.
 */
export class ReadAfterWriteWindow {
  private lastWriteMs: number | undefined;

  constructor(readonly windowMs: number) {
    if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs < 0) {
      throw InvalidWindow(`length must be a finite number of milliseconds >= 0, got ${windowMs}`);
    }
  }

  /** Records that the session wrote at `nowMs`. */
  noteWrite(nowMs: number): void {
    if (this.windowMs === 0) return;
    if (this.lastWriteMs === undefined || nowMs > this.lastWriteMs) this.lastWriteMs = nowMs;
  }

  /** True while reads at `nowMs` must go to the primary. A clock that went backwards counts as inside. */
  requiresPrimary(nowMs: number): boolean {
    if (this.lastWriteMs === undefined) return false;
    return nowMs - this.lastWriteMs < this.windowMs;
  }

  /** When the window closes, or undefined if no write is being waited out. */
  expiresAtMs(): number | undefined {
    return this.lastWriteMs === undefined ? undefined : this.lastWriteMs + this.windowMs;
  }

  /** Forgets the last write (e.g. when the session is pinned to the primary anyway). */
  reset(): void {
    this.lastWriteMs = undefined;
  }
}
