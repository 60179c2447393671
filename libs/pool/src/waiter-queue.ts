// FIFO of acquires waiting for a connection: an intrusive doubly linked list, O(1) push,
// head removal and removal from the middle (abort, timeout), no array shifting.

/** One queued acquire. The queue links it through prev/next; the pool fills in the rest. */
export class Waiter<L> {
  prev: Waiter<L> | undefined = undefined;
  next: Waiter<L> | undefined = undefined;
  queued = false;
  timer: NodeJS.Timeout | undefined = undefined;
  signal: AbortSignal | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;

  constructor(
    readonly reserved: boolean,
    readonly startedAt: number,
    readonly resolve: (lease: L) => void,
    readonly reject: (err: Error) => void,
  ) {}
}

export class WaiterQueue<L> {
  head: Waiter<L> | undefined = undefined;
  private tail: Waiter<L> | undefined = undefined;
  length = 0;

  push(waiter: Waiter<L>): void {
    waiter.prev = this.tail;
    waiter.next = undefined;
    if (this.tail) this.tail.next = waiter;
    else this.head = waiter;
    this.tail = waiter;
    waiter.queued = true;
    this.length++;
  }

  /** Unlinks a queued waiter wherever it is; a no-op for one already removed. */
  remove(waiter: Waiter<L>): void {
    if (!waiter.queued) return;
    if (waiter.prev) waiter.prev.next = waiter.next;
    else this.head = waiter.next;
    if (waiter.next) waiter.next.prev = waiter.prev;
    else this.tail = waiter.prev;
    waiter.prev = undefined;
    waiter.next = undefined;
    waiter.queued = false;
    this.length--;
  }

  /** Removes and returns every waiter, oldest first. */
  takeAll(): Waiter<L>[] {
    const all: Waiter<L>[] = [];
    while (this.head) {
      const waiter = this.head;
      this.remove(waiter);
      all.push(waiter);
    }
    return all;
  }
}
