// The reply cache of one process (spec 002 "reply-cache"): the store, fill admission, the trackers
// per master, and which redirect id each shared backend connection has enabled tracking with.
import { encodeCommand } from '@dbproxy/resp';
import type { Logger } from '@dbproxy/observability';
import type { BackendLink } from '../io/backend-link';
import type { ReplySink } from '../io/reply-sink';
import type { TickFlusher } from '../io/tick-flusher';
import type { EndpointRoute, LinkDirectory } from '../command/link-directory';
import { FillAdmission } from './admission';
import type { CacheSettings } from './cache-settings';
import { ReplyStore, type FlushReason } from './reply-store';
import { TrackerSet, type BarrierWaiter } from './trackers';

export const CACHING_YES = encodeCommand(['CLIENT', 'CACHING', 'YES']);

/** The reply to CLIENT TRACKING ON on a shared connection: a refusal makes the connection send it again before its next fill. */
class TrackingOnReply implements ReplySink {
  constructor(
    private readonly cache: ReplyCache,
    private readonly link: BackendLink,
  ) {}

  deliver(_seq: number, _part: number, buf: Buffer, start: number, end: number): void {
    if (buf[start] === 0x2d) this.cache.trackingRefused(this.link, buf.toString('utf8', start + 1, Math.min(end - 2, start + 200)));
  }

  fail(): void {}

  redirect(): boolean {
    return false;
  }
}

export class ReplyCache {
  readonly store: ReplyStore;
  readonly admission = new FillAdmission();
  private readonly trackers: TrackerSet;
  /** The tracker id each shared connection redirects to (absent: tracking not enabled on it yet). */
  private readonly redirects = new WeakMap<BackendLink, number>();
  /** Fills wait until every master is tracked. */
  private fillsAllowed = false;
  /** consistency = "strict": a hit is served after its master's tracker barrier (hit-barrier.ts). */
  strict: boolean;
  private barrierTimeoutMs: number;

  constructor(
    settings: CacheSettings,
    links: LinkDirectory,
    private readonly logger: Logger,
    flusher: TickFlusher,
  ) {
    this.strict = settings.strict;
    this.barrierTimeoutMs = settings.barrierTimeoutMs;
    this.store = new ReplyStore(settings.maxBytes, settings.maxAgeMs);
    this.trackers = new TrackerSet(links, {
      invalidate: (keys) => this.serverInvalidated(keys),
      flush: (reason) => this.store.flush(reason),
      readinessChanged: () => {
        this.fillsAllowed = this.trackers.allReady;
      },
      warn: (message) => this.logger.warn(message),
    }, flusher, () => this.barrierTimeoutMs);
  }

  configure(settings: CacheSettings): void {
    this.store.configure(settings.maxBytes, settings.maxAgeMs);
    this.strict = settings.strict;
    this.barrierTimeoutMs = settings.barrierTimeoutMs;
  }

  /** Queues a hit on the barrier of `endpointKey`'s tracker; false when that master is not tracked now. */
  barrier(endpointKey: string, waiter: BarrierWaiter): boolean {
    return this.trackers.barrier(endpointKey, waiter);
  }

  /** The master set of the routes in force. */
  syncMasters(primaries: readonly EndpointRoute[]): void {
    this.trackers.sync(primaries);
    this.fillsAllowed = this.trackers.allReady;
  }

  get fillsPaused(): boolean {
    return !this.fillsAllowed;
  }

  trackerCounts(): { ready: number; total: number } {
    return this.trackers.counts();
  }

  /**
   * Prepares `link` (a shared connection to `route`) for a fill: CLIENT TRACKING ON REDIRECT <id> OPTIN
   * when it is not enabled there with the current tracker's id. False when the route's master is not tracked.
   */
  prepareFill(link: BackendLink, route: EndpointRoute): boolean {
    if (!this.fillsAllowed) return false;
    const id = this.trackers.idFor(route.endpoint.key);
    if (id === 0) return false;
    if (this.redirects.get(link) !== id) {
      const frame = encodeCommand(['CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'OPTIN']);
      link.send(new TrackingOnReply(this, link), 0, -1, 0, 0, frame, 0, frame.length);
      this.redirects.set(link, id);
    }
    return true;
  }

  /** A shared connection refused CLIENT TRACKING ON (or the opt-in): it sends it again before its next fill. */
  trackingRefused(link: BackendLink, message: string): void {
    if (this.redirects.delete(link)) this.logger.warn(`redis reply cache: ${link.endpoint.address} refused client tracking: ${message}`);
  }

  flush(reason: FlushReason): void {
    this.store.flush(reason);
  }

  stop(): void {
    this.trackers.stop();
    this.store.flush('disabled');
  }

  private serverInvalidated(keys: readonly Buffer[] | null): void {
    if (keys === null) return this.store.flush('server_flush');
    for (const key of keys) this.store.invalidate(key.toString('latin1'));
  }
}

