// Batches socket writes per event-loop turn: whatever sessions and backend connections queued
// while the poll phase handled reads is written once each, in the check phase of the same turn.

/** Something with queued bytes to write once per turn. */
export interface Flushable {
  /** True while queued for the next flush (owned by TickFlusher). */
  flushQueued: boolean;
  flush(): void;
}

export class TickFlusher {
  private readonly queue: Flushable[] = [];
  private scheduled = false;
  private readonly run = (): void => this.flushAll();

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

  private flushAll(): void {
    this.scheduled = false;
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
