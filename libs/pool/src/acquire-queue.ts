// The acquires waiting on one pool: an ordinary and a reserved FIFO, each waiter's deadline and
// abort signal, and which waiters the free slots could serve.
import { monotonicNow } from './clock';
import { PoolErrors } from './errors';
import type { PoolCounters } from './pool-counters';
import type { Slot } from './pooled-connection';
import { Waiter, WaiterQueue } from './waiter-queue';

export class AcquireQueue<L> {
  private readonly ordinary = new WaiterQueue<L>();
  private readonly reserved = new WaiterQueue<L>();

  constructor(
    private readonly backend: string,
    private readonly counters: PoolCounters,
  ) {}

  get length(): number {
    return this.ordinary.length + this.reserved.length;
  }

  /** Waiters of one kind; an acquirer never overtakes them. */
  lengthOf(reserved: boolean): number {
    return reserved ? this.reserved.length : this.ordinary.length;
  }

  /**
   * Queues an acquire that settles when granted, at its deadline, or when its signal aborts.
   * Refused at once beyond `maxWaiters`. The waiter is queued when this returns.
   */
  wait(reserved: boolean, timeoutMs: number, signal: AbortSignal | undefined, maxWaiters: number): Promise<L> {
    if (this.length >= maxWaiters) {
      this.counters.waitersRejected++;
      this.counters.publish('queue-full');
      return Promise.reject(PoolErrors.queueFull(this.backend, maxWaiters));
    }
    return new Promise<L>((resolve, reject) => {
      const waiter = new Waiter<L>(reserved, monotonicNow(), resolve, reject);
      waiter.timer = setTimeout(() => this.expire(waiter), timeoutMs);
      if (signal !== undefined) {
        waiter.signal = signal;
        waiter.onAbort = () => this.abandon(waiter);
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.queueOf(reserved).push(waiter);
    });
  }

  /** The oldest waiter a free slot could serve now: reserved acquirers first. */
  nextServable(freeSlot: (reserved: boolean) => Slot | undefined): Waiter<L> | undefined {
    const reserved = this.reserved.head;
    if (reserved !== undefined && freeSlot(true) !== undefined) return reserved;
    const ordinary = this.ordinary.head;
    if (ordinary !== undefined && freeSlot(false) !== undefined) return ordinary;
    return undefined;
  }

  /** How many waiters the free slots could serve. */
  servable(freeReserved: number, freeOrdinary: number): number {
    const reserved = Math.min(this.reserved.length, freeReserved + freeOrdinary);
    const ordinaryLeft = freeOrdinary - Math.max(0, reserved - freeReserved);
    return reserved + Math.min(this.ordinary.length, Math.max(0, ordinaryLeft));
  }

  /** Hands the waiter its lease (built by `lend` from how long it waited). */
  grant(waiter: Waiter<L>, lend: (waitMs: number) => L): void {
    this.unqueue(waiter);
    waiter.resolve(lend(monotonicNow() - waiter.startedAt));
  }

  fail(waiter: Waiter<L>, err: Error): void {
    this.unqueue(waiter);
    waiter.reject(err);
  }

  /** Rejects every waiter, reserved ones first (the pool is draining). */
  failAll(err: () => Error): void {
    for (const waiter of [...this.reserved.takeAll(), ...this.ordinary.takeAll()]) {
      this.disarm(waiter);
      waiter.reject(err());
    }
  }

  private queueOf(reserved: boolean): WaiterQueue<L> {
    return reserved ? this.reserved : this.ordinary;
  }

  private expire(waiter: Waiter<L>): void {
    if (!this.unqueue(waiter)) return;
    const waited = monotonicNow() - waiter.startedAt;
    this.counters.acquireTimeouts++;
    this.counters.publish('acquire-timeout', waited);
    waiter.reject(PoolErrors.acquireTimeout(this.backend, Math.round(waited)));
  }

  private abandon(waiter: Waiter<L>): void {
    const reason: unknown = waiter.signal?.reason;
    if (!this.unqueue(waiter)) return;
    const waited = monotonicNow() - waiter.startedAt;
    this.counters.acquireAborts++;
    this.counters.publish('acquire-aborted', waited);
    waiter.reject(PoolErrors.acquireAborted.withCause(reason, this.backend, Math.round(waited)));
  }

  /** Takes a waiter off its queue and disarms it; false when it already left. */
  private unqueue(waiter: Waiter<L>): boolean {
    if (!waiter.queued) return false;
    this.queueOf(waiter.reserved).remove(waiter);
    this.disarm(waiter);
    return true;
  }

  private disarm(waiter: Waiter<L>): void {
    clearTimeout(waiter.timer);
    if (waiter.signal !== undefined && waiter.onAbort !== undefined) waiter.signal.removeEventListener('abort', waiter.onAbort);
  }
}
