// The cached replies of one process: two generations of key -> reply frame flipped under the byte
// budget (a lookup that finds an entry in the old generation moves it to the young one), with a
// max-age backstop, and the fill tickets that make a fill racing an invalidation harmless.

import { Buffer } from 'node:buffer';
import { bucketOfKey, KeyFilter } from './key-filter';

/** Bookkeeping bytes counted per entry beside its key and frame. */
const ENTRY_OVERHEAD = 64;

interface Entry {
  readonly frame: Buffer;
  readonly at: number;
  /** A nil read by MGET: the key may hold a non-string (GET would answer WRONGTYPE), so only MGET may use it. */
  readonly mgetOnly: boolean;
  readonly bytes: number;
  /** Its key's bucket in the store's KeyFilter. */
  readonly bucket: number;
}

/** A fill armed by a miss: stored only if no invalidation or flush came between arming and the reply. */
export class FillTicket {
  poisoned = false;
  constructor(
    readonly key: string,
    /** The store's flush count when armed. */
    readonly flushes: number,
  ) {}
}

export type FlushReason = 'tracker_lost' | 'fill_link_lost' | 'master_set' | 'server_flush' | 'write' | 'disabled';
export const FLUSH_REASONS: readonly FlushReason[] = ['tracker_lost', 'fill_link_lost', 'master_set', 'server_flush', 'write', 'disabled'];

export class CacheCounters {
  hits = 0;
  misses = 0;
  fills = 0;
  /** Fills whose ticket was poisoned (an invalidation or flush raced them) or whose reply was not cacheable. */
  fillsDropped = 0;
  invalidations = 0;
  /** Strict hits whose key went (or whose tracker was lost) while they waited for the barrier: read from the server. */
  refetches = 0;
  readonly flushes = new Map<FlushReason, number>(FLUSH_REASONS.map((r) => [r, 0]));
}

export class ReplyStore {
  private young = new Map<string, Entry>();
  private old = new Map<string, Entry>();
  private youngBytes = 0;
  private oldBytes = 0;
  private readonly tickets = new Map<string, FillTicket>();
  private flushCount = 0;
  /** Buckets of the keys in both generations (key-filter.ts): a lookup of a key in an empty bucket makes no string. */
  readonly filter = new KeyFilter();
  readonly counters = new CacheCounters();

  constructor(
    private maxBytes: number,
    private maxAgeMs: number,
  ) {}

  configure(maxBytes: number, maxAgeMs: number): void {
    this.maxBytes = maxBytes;
    this.maxAgeMs = maxAgeMs;
    while (this.youngBytes + this.oldBytes > maxBytes && (this.old.size > 0 || this.young.size > 0)) this.flip();
  }

  get bytes(): number {
    return this.youngBytes + this.oldBytes;
  }

  get entries(): number {
    return this.young.size + this.old.size;
  }

  /**
   * The cached reply of `key` (undefined: none, too old, or usable by MGET only and `forMget` is false).
   * `now` defaults to the clock, read only when an entry is found (a miss costs two map probes).
   */
  lookup(key: string, forMget: boolean, now?: number): Buffer | undefined {
    let entry = this.young.get(key);
    if (entry === undefined) {
      entry = this.old.get(key);
      if (entry === undefined) return undefined;
      this.old.delete(key);
      this.oldBytes -= entry.bytes;
      this.filter.removed(entry.bucket);
      if ((now ?? Date.now()) - entry.at > this.maxAgeMs) return undefined;
      this.put(key, entry);
    } else if ((now ?? Date.now()) - entry.at > this.maxAgeMs) {
      this.young.delete(key);
      this.youngBytes -= entry.bytes;
      this.filter.removed(entry.bucket);
      return undefined;
    }
    return entry.mgetOnly && !forMget ? undefined : entry.frame;
  }

  /** Arms a fill for `key`; undefined when one is in flight already (a key carries at most one ticket). */
  arm(key: string): FillTicket | undefined {
    if (this.tickets.has(key)) return undefined;
    const ticket = new FillTicket(key, this.flushCount);
    this.tickets.set(key, ticket);
    return ticket;
  }

  /** The fill's reply `frame` (copied here) arrived: stored unless the ticket was poisoned meanwhile. */
  fill(ticket: FillTicket, buf: Buffer, start: number, end: number, mgetOnly: boolean, now: number): void {
    if (this.tickets.get(ticket.key) === ticket) this.tickets.delete(ticket.key);
    if (ticket.poisoned || ticket.flushes !== this.flushCount) {
      this.counters.fillsDropped++;
      return;
    }
    const frame = Buffer.allocUnsafe(end - start);
    buf.copy(frame, 0, start, end);
    this.remove(ticket.key);
    this.put(ticket.key, { frame, at: now, mgetOnly, bytes: frame.length + ticket.key.length + ENTRY_OVERHEAD, bucket: bucketOfKey(ticket.key) });
    this.counters.fills++;
  }

  /** The fill will not complete (error, redirect, lost connection). */
  abandon(ticket: FillTicket): void {
    if (this.tickets.get(ticket.key) === ticket) this.tickets.delete(ticket.key);
    ticket.poisoned = true;
  }

  /** `key` changed (a write through the proxy, or the server's invalidation): its entry goes, its fill in flight is poisoned. */
  invalidate(key: string): void {
    const ticket = this.tickets.get(key);
    if (ticket !== undefined) {
      ticket.poisoned = true;
      this.tickets.delete(key);
    }
    if (this.remove(key)) this.counters.invalidations++;
  }

  /** Everything goes, and every fill in flight is poisoned. */
  flush(reason: FlushReason): void {
    this.flushCount++;
    for (const ticket of this.tickets.values()) ticket.poisoned = true;
    this.tickets.clear();
    this.young = new Map();
    this.old = new Map();
    this.youngBytes = 0;
    this.oldBytes = 0;
    this.filter.clear();
    this.counters.flushes.set(reason, (this.counters.flushes.get(reason) ?? 0) + 1);
  }

  private put(key: string, entry: Entry): void {
    if (entry.bytes > this.maxBytes / 2) return;
    if (this.youngBytes + entry.bytes > this.maxBytes / 2) this.flip();
    this.young.set(key, entry);
    this.youngBytes += entry.bytes;
    this.filter.added(entry.bucket);
  }

  /** The young generation becomes the old one; the old one is dropped. */
  private flip(): void {
    for (const dropped of this.old.values()) this.filter.removed(dropped.bucket);
    this.old = this.young;
    this.oldBytes = this.youngBytes;
    this.young = new Map();
    this.youngBytes = 0;
  }

  private remove(key: string): boolean {
    const young = this.young.get(key);
    if (young !== undefined) {
      this.young.delete(key);
      this.youngBytes -= young.bytes;
      this.filter.removed(young.bucket);
      const old = this.old.get(key);
      if (old !== undefined) {
        this.old.delete(key);
        this.oldBytes -= old.bytes;
        this.filter.removed(old.bucket);
      }
      return true;
    }
    const old = this.old.get(key);
    if (old === undefined) return false;
    this.old.delete(key);
    this.oldBytes -= old.bytes;
    this.filter.removed(old.bucket);
    return true;
  }
}
