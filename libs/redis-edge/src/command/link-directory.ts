// The backend connections of one process: one shared pipelined connection per node (opened on
// first use, reopened after a failure), leases of dedicated connections for blocking commands
// (bounded per node), and the sweep that times out stuck connections.
import { RedisEdgeErrors } from '../errors';
import { BackendLink, type FrameSink, type LinkOptions } from '../io/backend-link';
import type { CommandCounts } from '../metrics';
import { DEFAULT_STATE, isDefaultState, killSetupFrames, setupFrames, type ConnectionState, type NodeEndpoint } from '../io/endpoint';

/** A node as routing tables hold it, with its shared connection (kept across table rebuilds). */
export class EndpointRoute {
  shared: BackendLink | undefined;
  constructor(
    readonly endpoint: NodeEndpoint,
    /** Commands sent to this node, by type (metrics). */
    readonly counts: CommandCounts = { reads: 0, writes: 0, others: 0, published: [0, 0, 0] },
  ) {}
}

function sameEndpoint(a: NodeEndpoint, b: NodeEndpoint): boolean {
  return a === b || (a.key === b.key && a.name === b.name && a.shard === b.shard && a.role === b.role && a.username === b.username && a.password === b.password);
}

interface LeasePool {
  readonly idle: BackendLink[];
  open: number;
}

/** Idle blocking connections kept per node for reuse. */
const MAX_IDLE_LEASES = 8;

export interface LinkDirectoryOptions {
  readonly link: LinkOptions;
  readonly commandTimeoutMs: () => number;
  readonly maxLeasesPerNode: () => number;
  readonly onLease?: (event: 'leased' | 'returned' | 'closed' | 'refused') => void;
  /** A link could not connect (its detail, with the OS error and address, is for the log: clients read a stable text). */
  readonly onConnectFailed?: (endpoint: NodeEndpoint, err: Error) => void;
}

export class LinkDirectory {
  private readonly routes = new Map<string, EndpointRoute>();
  private readonly leases = new Map<string, LeasePool>();
  private readonly tracked = new Set<BackendLink>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly options: LinkDirectoryOptions) {
    this.sweep = setInterval(() => this.timeOutStuckLinks(), 1000);
    this.sweep.unref();
  }

  /** The route object for `endpoint` (one per endpoint key, so shared links survive rebuilds). */
  route(endpoint: NodeEndpoint): EndpointRoute {
    const existing = this.routes.get(endpoint.key);
    if (existing && sameEndpoint(existing.endpoint, endpoint)) return existing;
    const route = new EndpointRoute(endpoint, existing?.counts);
    if (existing?.shared) this.retire(existing.shared);
    this.routes.set(endpoint.key, route);
    return route;
  }

  /** The shared connection to the route's node, opened lazily. */
  shared(route: EndpointRoute): BackendLink {
    const link = route.shared;
    if (link && !link.closed) return link;
    const fresh = this.open(route.endpoint, DEFAULT_STATE);
    route.shared = fresh;
    return fresh;
  }

  /** A connection of its own for a session (state replayed), or a pub/sub connection with `sink`. */
  open(endpoint: NodeEndpoint, state: ConnectionState, sink?: FrameSink): BackendLink {
    return this.track(new BackendLink(endpoint, setupFrames(endpoint, state), this.options.link, sink));
  }

  /**
   * A fresh connection for one SCRIPT KILL / FUNCTION KILL, set up with allow-busy commands only, outside
   * the lease pool (blocked clients cannot use it up); timed out like any command (not `blocking`).
   */
  openForKill(endpoint: NodeEndpoint, state: ConnectionState): BackendLink {
    return this.track(new BackendLink(endpoint, killSetupFrames(endpoint, state), this.options.link));
  }

  private track(link: BackendLink): BackendLink {
    this.tracked.add(link);
    link.onClosed = (l, err) => {
      this.tracked.delete(link);
      if (RedisEdgeErrors.backendConnect.is(err)) this.options.onConnectFailed?.(l.endpoint, err);
    };
    return link;
  }

  /** A dedicated connection for one blocking command, or an error when the node's leases are used up. */
  lease(endpoint: NodeEndpoint, state: ConnectionState): BackendLink | Error {
    const pool = this.poolOf(endpoint);
    const reusable = isDefaultState(state);
    while (reusable && pool.idle.length > 0) {
      const link = pool.idle.pop() as BackendLink;
      if (!link.closed) return this.leased(link);
    }
    const max = this.options.maxLeasesPerNode();
    if (pool.open >= max) {
      this.options.onLease?.('refused');
      return RedisEdgeErrors.leasesExhausted(endpoint.address, max);
    }
    const link = this.open(endpoint, state);
    link.blocking = true;
    pool.open++;
    const forget = link.onClosed;
    link.onClosed = (l, err) => {
      forget?.(l, err);
      pool.open--;
      const at = pool.idle.indexOf(l);
      if (at >= 0) pool.idle.splice(at, 1);
      this.options.onLease?.('closed');
    };
    return this.leased(link);
  }

  /** Gives a leased connection back: kept for reuse when its command completed and it carries default state. */
  release(link: BackendLink, reusable: boolean): void {
    const pool = this.poolOf(link.endpoint);
    if (reusable && !link.closed && link.pending === 0 && pool.idle.length < MAX_IDLE_LEASES) {
      pool.idle.push(link);
      this.options.onLease?.('returned');
    } else {
      link.close(RedisEdgeErrors.backendLost(link.endpoint.address, 'lease ended'), 'lease ended');
    }
  }

  /** Blocking connections open to each node (leased or idle). */
  leaseCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [key, pool] of this.leases) counts.set(key, pool.open);
    return counts;
  }

  /** Every node routed to so far (metrics). */
  allRoutes(): IterableIterator<EndpointRoute> {
    return this.routes.values();
  }

  /** Connections open or opening. */
  /** Open backend connections per backend name (GET /pools). */
  linksByBackend(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const link of this.tracked) counts.set(link.endpoint.name, (counts.get(link.endpoint.name) ?? 0) + 1);
    return counts;
  }

  get linkCount(): number {
    return this.tracked.size;
  }

  /** offline_hard: closes every connection to the backend named `name` now; their waiting commands get `err`. */
  closeBackend(name: string, err: Error): void {
    for (const link of [...this.tracked]) if (link.endpoint.name === name) link.close(err, 'offline_hard');
  }

  close(): void {
    clearInterval(this.sweep);
    for (const link of [...this.tracked]) link.close(RedisEdgeErrors.shuttingDown(), 'shutdown');
  }

  /** Closes a shared connection whose endpoint changed (credentials, role) once its replies are in. */
  private retire(link: BackendLink): void {
    const err = RedisEdgeErrors.backendLost(link.endpoint.address, 'endpoint reconfigured');
    if (link.pending === 0) return link.close(err, 'retired');
    setTimeout(() => link.close(err, 'retired'), this.options.commandTimeoutMs()).unref();
  }

  private leased(link: BackendLink): BackendLink {
    this.options.onLease?.('leased');
    return link;
  }

  private poolOf(endpoint: NodeEndpoint): LeasePool {
    let pool = this.leases.get(endpoint.key);
    if (!pool) {
      pool = { idle: [], open: 0 };
      this.leases.set(endpoint.key, pool);
    }
    return pool;
  }

  private timeOutStuckLinks(): void {
    const timeoutMs = this.options.commandTimeoutMs();
    const now = Date.now();
    for (const link of this.tracked) {
      if (link.blocking || link.pending === 0 || now - link.lastProgress <= timeoutMs) continue;
      link.close(RedisEdgeErrors.backendTimeout(link.endpoint.address, timeoutMs / 1000), 'command timeout');
    }
  }
}
