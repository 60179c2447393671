// The fill connections of the reply cache: one per master, opened on the first fill, with
// CLIENT TRACKING ON REDIRECT <tracker id> OPTIN; fills go there as CLIENT CACHING YES + the
// command (its reply answers the client too), so the shared connections never have tracking
// enabled. A tracker with a new id replaces the master's fill connection; a refused CLIENT TRACKING
// retires it and pauses that master's fills for a while. A retired connection is closed once the
// replies it owes are in (they still answer their clients; their fills are dropped). Losing a fill
// connection flushes the cache: the server forgets what a closed connection tracked, so the keys
// filled through it would get no invalidation any more.
import { encodeCommand } from '@dbproxy/resp';
import { RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import { DEFAULT_STATE, type NodeEndpoint } from '../io/endpoint';
import type { ReplySink } from '../io/reply-sink';
import type { LinkDirectory } from '../command/link-directory';

/** How long a master whose fill connection refused CLIENT TRACKING gets no fills. */
const REFUSED_PAUSE_MS = 5_000;
const RETIRE_CHECK_MS = 100;
const MINUS = 0x2d;

interface FillLink {
  readonly link: BackendLink;
  readonly endpoint: NodeEndpoint;
  /** The tracker id its invalidations are redirected to. */
  readonly id: number;
}

/** The reply to CLIENT TRACKING ON on a fill connection: a refusal retires it (the fills queued behind are answered untracked and dropped). */
class TrackingOnReply implements ReplySink {
  constructor(
    private readonly links: FillLinks,
    private readonly link: BackendLink,
  ) {}

  deliver(_seq: number, _part: number, buf: Buffer, start: number, end: number): void {
    if (buf[start] === MINUS) this.links.refused(this.link, buf.toString('utf8', start + 1, Math.min(end - 2, start + 200)));
  }

  fail(): void {}

  redirect(): boolean {
    return false;
  }
}

export class FillLinks {
  private readonly links = new Map<string, FillLink>();
  /** Endpoint key -> time until which it gets no fill connection (it refused CLIENT TRACKING). */
  private readonly pausedUntil = new Map<string, number>();

  constructor(
    private readonly directory: LinkDirectory,
    private readonly warn: (message: string) => void,
    /** A fill connection in use was lost: what it tracked is forgotten by the server. */
    private readonly lost: () => void,
  ) {}

  /** The fill connection to `endpoint` with tracking redirected to `id` (opened or replaced as needed); undefined while paused. */
  get(endpoint: NodeEndpoint, id: number): BackendLink | undefined {
    const have = this.links.get(endpoint.key);
    if (have !== undefined && have.id === id && have.endpoint === endpoint && !have.link.closed) return have.link;
    if (this.pausedUntil.size > 0 && (this.pausedUntil.get(endpoint.key) ?? 0) > Date.now()) return undefined;
    if (have !== undefined) this.retire(have.link, 'fill connection replaced');
    const link = this.directory.open(endpoint, DEFAULT_STATE);
    const untrack = link.onClosed;
    link.onClosed = (closed, err) => {
      untrack?.(closed, err);
      // Not retired on purpose (a retired one's fills were flushed or never tracked).
      if (this.links.get(endpoint.key)?.link !== closed) return;
      this.links.delete(endpoint.key);
      this.lost();
    };
    const frame = encodeCommand(['CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'OPTIN']);
    link.send(new TrackingOnReply(this, link), 0, -1, 0, 0, frame, 0, frame.length);
    this.links.set(endpoint.key, { link, endpoint, id });
    return link;
  }

  /** A fill connection refused CLIENT TRACKING (or an opt-in): retired, and its master gets no fills for a while. */
  refused(link: BackendLink, message: string): void {
    const have = this.links.get(link.endpoint.key);
    if (have?.link !== link) return;
    this.links.delete(link.endpoint.key);
    this.pausedUntil.set(link.endpoint.key, Date.now() + REFUSED_PAUSE_MS);
    this.warn(`redis reply cache: ${link.endpoint.address} refused client tracking on the fill connection: ${message}; no fills there for ${REFUSED_PAUSE_MS / 1000} s`);
    this.retire(link, 'client tracking refused');
  }

  /** Fill connections to nodes that are no longer masters are closed. */
  keepOnly(endpointKeys: ReadonlySet<string>): void {
    for (const [key, have] of this.links) {
      if (endpointKeys.has(key)) continue;
      this.links.delete(key);
      this.retire(have.link, 'no longer a master');
    }
  }

  closeAll(): void {
    for (const have of this.links.values()) this.retire(have.link, 'reply cache stopped');
    this.links.clear();
  }

  /** Fill connections open (or opening). */
  get size(): number {
    return this.links.size;
  }

  /** Closes `link` once it owes no reply (checked every RETIRE_CHECK_MS; the link directory times out a stuck one). */
  private retire(link: BackendLink, reason: string): void {
    if (link.closed) return;
    if (link.pending === 0) return link.close(RedisEdgeErrors.backendLost(link.endpoint.address, reason), reason);
    setTimeout(() => this.retire(link, reason), RETIRE_CHECK_MS).unref();
  }
}
