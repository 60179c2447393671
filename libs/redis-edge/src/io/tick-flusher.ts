// Batches socket writes per event-loop turn: whatever sessions and backend connections queued
// while the poll phase handled reads is written once each, in the check phase of the same turn
// (or earlier, by flushNow, when the caller knows nothing more will join the batch).

/** Something with queued bytes to write once per turn. */
export interface Flushable {
  /** True while queued for the next flush (owned by TickFlusher). */
  flushQueued: boolean;
  flush(): void;
}

export class TickFlusher {
  private readonly queue: Flushable[] = [];
  private scheduled = false;
  private readonly run = (): void => {
    this.scheduled = false;
    this.flushAll();
  };

  /** Queues `item` for this turn's flush (once, however often it is called). */
  schedule(item: Flushable): void {
    if (item.flushQueued) return;
    item.flushQueued = true;
    this.queue.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  /** Flushes what is queued now instead of at the end of the turn (the turn's flush then finds less to do). */
  flushNow(): void {
    if (this.queue.length > 0) this.flushAll();
  }

  private flushAll(): void {
    const queue = this.queue;
    // Items queued by a flush (a reply written synchronously) join this same pass.
    for (let i = 0; i < queue.length; i++) {
      const item = queue[i];
      item.flushQueued = false;
      item.flush();
    }
    queue.length = 0;
  }
}
