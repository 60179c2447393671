// One RESP3 tracking connection per master (HELLO 3, then CLIENT ID): the connection every shared
// backend connection redirects its CLIENT TRACKING invalidations to. Losing one, or a change in the
// master set, flushes the cache; fills pause until every master is tracked again. Each tracker is also
// the barrier a strict cache hit waits on (hit-barrier.ts): one PING per turn for the hits that
// arrived before it was written; its PONG comes after every invalidation Redis queued before it.
import { decodeReply, encodeCommand, ReplyFlag, type RespValue } from '@dbproxy/resp';
import { errorMessage } from '@dbproxy/util';
import type { BackendLink, FrameSink } from '../io/backend-link';
import type { NodeEndpoint } from '../io/endpoint';
import type { Flushable, TickFlusher } from '../io/tick-flusher';
import type { EndpointRoute, LinkDirectory } from '../command/link-directory';
import type { FlushReason } from './reply-store';

const CLIENT_ID = encodeCommand(['CLIENT', 'ID']);
const PING = encodeCommand(['PING']);
/** A RESP3 push frame's first byte (the scanner flags it too). */
const GREATER = 0x3e;
const RESP3 = Object.freeze({ protocol: 3 as const, auth: undefined, db: undefined, name: undefined });
/** Delay before a lost tracker is opened again (doubling up to 5 s while it keeps failing). */
const REOPEN_MS = 100;
const MAX_REOPEN_MS = 5_000;

export interface TrackerEvents {
  /** Keys the server says changed (null: everything, as after FLUSHALL). */
  invalidate(keys: readonly Buffer[] | null): void;
  flush(reason: FlushReason): void;
  /** Every master's tracker is ready again (or one stopped being ready). */
  readinessChanged(): void;
  warn(message: string): void;
}

/** A cache hit waiting for a tracker barrier. */
export interface BarrierWaiter {
  /** The PING's reply arrived: every invalidation queued before it was applied. */
  passed(): void;
  /** The tracker was lost or stopped first (the cache was flushed): the hit reads the server. */
  failed(): void;
}

class Tracker implements FrameSink, Flushable {
  /** The server's client id of this connection; 0 until CLIENT ID answered. */
  id = 0;
  flushQueued = false;
  /** Hits for the PING not written yet (it goes out with this turn's flush). */
  private next: BarrierWaiter[] | undefined;
  /** Hits per PING written, oldest first: each PONG releases the oldest. */
  private readonly sent: BarrierWaiter[][] = [];
  /** When each of those PINGs was written. */
  private readonly sentAt: number[] = [];
  /** Checks that the oldest PING is answered within the command timeout. */
  private watchdog: NodeJS.Timeout | undefined;
  private link: BackendLink | undefined;
  private stopped = false;
  private retryMs = REOPEN_MS;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly endpoint: NodeEndpoint,
    private readonly links: LinkDirectory,
    private readonly events: TrackerEvents,
    private readonly flusher: TickFlusher,
    private readonly timeoutMs: () => number,
  ) {
    this.open();
  }

  /**
   * Queues `waiter` for the PING of this turn (written at the turn's flush, after the hit was read
   * from its client, so never one written before it). False when the tracker is not ready.
   */
  barrier(waiter: BarrierWaiter): boolean {
    if (this.id === 0) return false;
    if (this.next === undefined) {
      this.next = [];
      this.flusher.schedule(this);
    }
    this.next.push(waiter);
    return true;
  }

  /** The turn's flush: the PING goes out (the link joins the same flush pass). */
  flush(): void {
    const batch = this.next;
    if (batch === undefined) return;
    this.next = undefined;
    if (this.id === 0 || this.link === undefined) return failAll(batch);
    this.sent.push(batch);
    this.sentAt.push(Date.now());
    this.link.write(PING);
    if (this.watchdog === undefined) this.armWatchdog(this.timeoutMs());
  }

  private armWatchdog(ms: number): void {
    this.watchdog = setTimeout(() => this.checkAnswered(), ms);
    this.watchdog.unref();
  }

  /** A server that stopped answering the tracker must not hold hits: the tracker is closed (flush; they read the server). */
  private checkAnswered(): void {
    this.watchdog = undefined;
    if (this.sent.length === 0 || this.link === undefined) return;
    const timeout = this.timeoutMs();
    const left = (this.sentAt[0] as number) + timeout - Date.now();
    if (left > 0) return this.armWatchdog(left);
    this.link.close(new Error(`PING unanswered for ${timeout / 1000} s`), 'tracker barrier timeout');
  }

  private failWaiting(): void {
    this.sentAt.length = 0;
    const batches = this.sent.splice(0);
    if (this.next !== undefined) batches.push(this.next);
    this.next = undefined;
    for (const batch of batches) failAll(batch);
  }

  private open(): void {
    this.timer = undefined;
    if (this.stopped) return;
    this.id = 0;
    const link = this.links.open(this.endpoint, RESP3, this);
    this.link = link;
    link.write(CLIENT_ID);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.watchdog) clearTimeout(this.watchdog);
    this.link?.close(new Error('tracker stopped'), 'tracker stopped');
    this.failWaiting();
  }

  onFrame(link: BackendLink, buf: Buffer, start: number, end: number, flags: number): void {
    if (link !== this.link) return;
    // PING's reply (+PONG, or an error such as -BUSY during a script: as ordered behind the
    // invalidations before it) releases the hits of the oldest PING written.
    if (this.sent.length > 0 && (flags & ReplyFlag.Push) === 0 && buf[start] !== GREATER) {
      this.sentAt.shift();
      for (const waiter of this.sent.shift() as BarrierWaiter[]) waiter.passed();
      return;
    }
    let value: RespValue;
    try {
      value = decodeReply(buf, start, end);
    } catch (err) {
      return link.close(new Error(`tracking connection sent an unreadable frame: ${errorMessage(err)}`));
    }
    if ((flags & ReplyFlag.Push) !== 0 || value.type === 'push') return this.push(value);
    if (this.id === 0 && value.type === 'integer') {
      this.id = Number(value.value);
      this.retryMs = REOPEN_MS;
      this.events.readinessChanged();
      return;
    }
    if (value.type === 'error') link.close(new Error(`tracking connection refused: ${value.message}`));
  }

  private push(value: RespValue): void {
    if (value.type !== 'push' || value.items.length < 2) return;
    const [kind, body] = value.items;
    if (kind.type !== 'bulk' || kind.value.toString() !== 'invalidate') return;
    if (body.type === 'null') return this.events.invalidate(null);
    if (body.type !== 'array') return;
    const keys: Buffer[] = [];
    for (const item of body.items) if (item.type === 'bulk') keys.push(item.value);
    this.events.invalidate(keys);
  }

  onLinkClosed(link: BackendLink, err: Error): void {
    if (link !== this.link || this.stopped) return;
    const wasReady = this.id !== 0;
    this.id = 0;
    this.link = undefined;
    this.events.flush('tracker_lost');
    this.failWaiting();
    this.events.readinessChanged();
    if (wasReady) this.events.warn(`redis reply cache: tracking connection to ${this.endpoint.address} lost (${err.message}); cache flushed, fills paused until it is back`);
    this.timer = setTimeout(() => this.open(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_REOPEN_MS);
  }
}

function failAll(batch: readonly BarrierWaiter[]): void {
  for (const waiter of batch) waiter.failed();
}

export class TrackerSet {
  private readonly trackers = new Map<string, Tracker>();

  constructor(
    private readonly links: LinkDirectory,
    private readonly events: TrackerEvents,
    private readonly flusher: TickFlusher,
    private readonly timeoutMs: () => number,
  ) {}

  /** The masters now: trackers follow (opened, stopped); a different set flushes the cache. */
  sync(primaries: readonly EndpointRoute[]): void {
    const wanted = new Map(primaries.map((r) => [r.endpoint.key, r.endpoint]));
    const same = wanted.size === this.trackers.size && [...wanted].every(([key, e]) => this.trackers.get(key)?.endpoint === e);
    if (same) return;
    for (const [key, tracker] of this.trackers) {
      if (wanted.get(key) === tracker.endpoint) continue;
      tracker.stop();
      this.trackers.delete(key);
    }
    // The dead trackers' ids are forgotten before anything else, so no connection redirects at them.
    this.events.flush('master_set');
    for (const [key, endpoint] of wanted) if (!this.trackers.has(key)) this.trackers.set(key, new Tracker(endpoint, this.links, this.events, this.flusher, this.timeoutMs));
    this.events.readinessChanged();
  }

  /** Every master has a tracking connection with a known id. */
  get allReady(): boolean {
    if (this.trackers.size === 0) return false;
    for (const t of this.trackers.values()) if (t.id === 0) return false;
    return true;
  }

  /** The redirect id for connections to `endpointKey` (0: not tracked now). */
  idFor(endpointKey: string): number {
    return this.trackers.get(endpointKey)?.id ?? 0;
  }

  /** Queues `waiter` on the barrier of `endpointKey`'s tracker; false when that master is not tracked now. */
  barrier(endpointKey: string, waiter: BarrierWaiter): boolean {
    return this.trackers.get(endpointKey)?.barrier(waiter) ?? false;
  }

  /** Trackers with a known id, of all masters. */
  counts(): { ready: number; total: number } {
    let ready = 0;
    for (const t of this.trackers.values()) if (t.id !== 0) ready++;
    return { ready, total: this.trackers.size };
  }

  stop(): void {
    for (const t of this.trackers.values()) t.stop();
    this.trackers.clear();
  }
}
