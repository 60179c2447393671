// The process-wide bound on result bytes held by transaction-mode sessions ([postgres]
// max_buffered_result_bytes): every session's held rows draw from it, and give back when sent.
export class ResultBudget {
  private held = 0;

  constructor(public limit: number) {}

  /** Bytes held by every session of this process now (the dbproxy_pg_buffered_result_bytes gauge). */
  get used(): number {
    return this.held;
  }

  /** Takes `bytes` when they fit under the bound; false (nothing taken) when they do not. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}
