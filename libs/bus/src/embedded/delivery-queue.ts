// A bounded FIFO per embedded subscription or watch: delivers asynchronously (as NATS does),
// in order, and drops with a report instead of growing without bound.
import { reportDropped } from '../diagnostics';

/** Deliveries run per event-loop turn before yielding, so one busy subscriber cannot starve I/O. */
const BATCH = 256;

export class DeliveryQueue<T> {
  private readonly items: T[] = [];
  private head = 0;
  private scheduled = false;
  private stopped = false;

  constructor(
    private readonly capacity: number,
    private readonly run: (item: T) => void,
    private readonly describe: (item: T) => string,
  ) {}

  /** `force` bypasses the bound, for internal markers that must not be lost. */
  push(item: T, force = false): void {
    if (this.stopped) return;
    if (!force && this.items.length - this.head >= this.capacity) {
      reportDropped(this.describe(item), 'slow-consumer', `more than ${this.capacity} messages waiting`);
      return;
    }
    this.items.push(item);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.items.length = 0;
    this.head = 0;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    for (let n = 0; n < BATCH && !this.stopped && this.head < this.items.length; n++) {
      const item = this.items[this.head] as T;
      this.head++;
      this.run(item);
    }
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (!this.stopped) {
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items.splice(0, this.head);
        this.head = 0;
      }
      this.schedule();
    }
  }
}
