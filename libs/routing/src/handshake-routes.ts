// HandshakeRoutes: the shard (cluster) a login goes to, from the database and user its handshake
// names ([[mysql.routes]] / [[postgres.routes]]): the first route whose fields all match, else the
// default shard, else none (the edge refuses the login).

export interface HandshakeRouteSpec {
  readonly name: string;
  /** Exact text, or `*` for any run of characters; absent: any database. */
  readonly database?: string | undefined;
  /** Same, for the user. */
  readonly user?: string | undefined;
  readonly shard: string;
  /** MySQL: the route's own authentication mode; absent: the section's. */
  readonly auth?: 'proxy' | 'passthrough' | undefined;
}

export type RouteOutcome = 'matched' | 'default' | 'refused';

export interface RouteChoice {
  /** The route's name, or DEFAULT_ROUTE for the default shard. */
  readonly route: string;
  readonly shard: string;
  readonly outcome: 'matched' | 'default';
  /** The matched route's `auth`, when it sets one. */
  readonly auth?: 'proxy' | 'passthrough';
}

/** The `route` of a login that fell through to the default shard (metrics, logs, GET /sessions). */
export const DEFAULT_ROUTE = '(default)';
/** The `route` label of a refused login. */
export const NO_ROUTE = '(none)';

type Matcher = (text: string) => boolean;

function matcherOf(pattern: string | undefined): Matcher {
  if (pattern === undefined) return () => true;
  if (!pattern.includes('*')) return (text) => text === pattern;
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[\\^$.+?()[\]{}|]/g, '\\$&'))
    .join('[\\s\\S]*');
  const regex = new RegExp(`^${source}$`);
  return (text) => regex.test(text);
}

interface CompiledRoute {
  readonly spec: HandshakeRouteSpec;
  readonly database: Matcher;
  readonly user: Matcher;
}

export class HandshakeRoutes {
  private readonly routes: readonly CompiledRoute[];

  constructor(
    specs: readonly HandshakeRouteSpec[],
    private readonly defaultShard: string | undefined,
  ) {
    this.routes = specs.map((spec) => ({ spec, database: matcherOf(spec.database), user: matcherOf(spec.user) }));
  }

  /** Routes are configured: logins are routed (and may be refused). */
  get active(): boolean {
    return this.routes.length > 0;
  }

  /** The (route, outcome) pairs a login can produce: the metric series to show at zero. */
  series(): { route: string; outcome: RouteOutcome }[] {
    if (!this.active) return [];
    const matched = this.routes.map((r) => ({ route: r.spec.name, outcome: 'matched' as const }));
    return [...matched, this.defaultShard === undefined ? { route: NO_ROUTE, outcome: 'refused' } : { route: DEFAULT_ROUTE, outcome: 'default' }];
  }

  /** `database` is '' when the login names none (it then matches only a `*` pattern or no database field). */
  choose(database: string, user: string): RouteChoice | null {
    for (const r of this.routes) if (r.database(database) && r.user(user)) return { route: r.spec.name, shard: r.spec.shard, outcome: 'matched', ...(r.spec.auth ? { auth: r.spec.auth } : {}) };
    if (this.defaultShard !== undefined) return { route: DEFAULT_ROUTE, shard: this.defaultShard, outcome: 'default' };
    return null;
  }
}
