// The reply cache of one process (spec 002 "reply-cache"): the store, fill admission, the trackers
// per master, and the fill connections (one per master, the only ones with tracking enabled).
import type { Logger } from '@dbproxy/observability';
import type { BackendLink } from '../io/backend-link';
import type { TickFlusher } from '../io/tick-flusher';
import type { EndpointRoute, LinkDirectory } from '../command/link-directory';
import { FillAdmission } from './admission';
import type { CacheSettings } from './cache-settings';
import { FillLinks } from './fill-links';
import { ReplyStore, type FlushReason } from './reply-store';
import { TrackerSet, type BarrierWaiter } from './trackers';

export class ReplyCache {
  readonly store: ReplyStore;
  readonly admission = new FillAdmission();
  private readonly trackers: TrackerSet;
  readonly fillLinks: FillLinks;
  /** The masters' routes in force (their shared connections carry the writes that fences wait for). */
  private primaries: readonly EndpointRoute[] = [];
  /**
   * Per master, its shared connection at the last write and the count of commands that connection must
   * have had answered before a fill to the master may go on the fill connection: every write dispatched
   * so far (a fill there could run before one still queued).
   */
  private readonly fences = new WeakMap<EndpointRoute, { link: BackendLink | undefined; count: number }>();
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
    this.fillLinks = new FillLinks(
      links,
      (message) => this.logger.warn(message),
      () => this.store.flush('fill_link_lost'),
    );
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
    this.primaries = primaries;
    this.trackers.sync(primaries);
    this.fillLinks.keepOnly(new Set(primaries.map((r) => r.endpoint.key)));
    this.fillsAllowed = this.trackers.allReady;
  }

  get fillsPaused(): boolean {
    return !this.fillsAllowed;
  }

  trackerCounts(): { ready: number; total: number } {
    return this.trackers.counts();
  }

  /**
   * The fill connection to `route`'s master (CLIENT TRACKING ON REDIRECT <its tracker's id> OPTIN,
   * opened or replaced as needed); undefined when fills are paused or the master is not tracked.
   */
  fillLink(route: EndpointRoute): BackendLink | undefined {
    if (!this.fillsAllowed) return undefined;
    const id = this.trackers.idFor(route.endpoint.key);
    return id === 0 ? undefined : this.fillLinks.get(route.endpoint, id);
  }

  /**
   * A write is being dispatched (or an EXEC with writes): a fill may go on a fill connection only once
   * every command queued so far on the masters' shared connections, this write included, was answered.
   */
  fenceWrites(): void {
    for (const route of this.primaries) {
      let fence = this.fences.get(route);
      if (fence === undefined) {
        fence = { link: undefined, count: 0 };
        this.fences.set(route, fence);
      }
      fence.link = route.shared;
      fence.count = route.shared === undefined ? 0 : route.shared.fifo.pushed + 1;
    }
  }

  /** No write dispatched before now is still in flight on `route`'s shared connection. */
  writesSettled(route: EndpointRoute): boolean {
    const fence = this.fences.get(route);
    if (fence === undefined) return true;
    const link = route.shared;
    if (link === undefined) return true;
    if (link === fence.link) return link.fifo.shifted >= fence.count;
    // The connection changed since the write (opened by it, or replaced): settled once nothing is in flight on it.
    if (link.fifo.length !== 0) return false;
    fence.link = link;
    fence.count = 0;
    return true;
  }

  flush(reason: FlushReason): void {
    this.store.flush(reason);
  }

  stop(): void {
    this.trackers.stop();
    this.fillLinks.closeAll();
    this.store.flush('disabled');
  }

  private serverInvalidated(keys: readonly Buffer[] | null): void {
    if (keys === null) return this.store.flush('server_flush');
    for (const key of keys) this.store.invalidate(key.toString('latin1'));
  }
}

