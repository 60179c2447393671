// The edge's backend pools: one bounded libs/pool pool per backend and client capability profile
// (forwarded bytes must be in the format the client negotiated), sized from the configuration
// epoch, connecting where topology says (DNS pins), retired on drain actions, drained when removed.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { DeepReadonly, MysqlBackendConfig } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import { BackendPool, SharedCapacity, type ConnectionFactory, type PoolSizing, type PoolStats } from '@dbproxy/pool';
import { Capability, MariaDbCapability } from '@dbproxy/protocol-mysql';
import { retirementOf, testHostAddress, type TopologyView } from '@dbproxy/topology-client';
import type { EdgeEpoch } from '../epoch';
import type { StateTable } from '../state-machine';
import { BackendConnection, type BackendConnectionState } from './backend-connection';
import { TRACK_LAST_GTID } from '../causal/causal-reads';
import { openBackend, type BackendEndpoint, type SetupQuery } from './backend-handshake';
import { FORWARDABLE_MARIADB_CAPABILITIES, probeBackends, type BackendIdentities } from './backend-identity';
import { MysqlEdgeErrors } from '../errors';
import { COLLATIONS_QUERY, type CollationCatalog } from './collations';
import { originPoolKey, proxyHeaderFor } from './proxy-origin';
import type { ProxiedAddresses } from '@dbproxy/runtime';

/**
 * Client capabilities that change the bytes of responses: each combination gets its own pools.
 * CLIENT_LOCAL_FILES (offered only with [mysql] local_infile) is one: the server asks for a file
 * only on a connection that has it, and refuses LOAD DATA LOCAL itself (4166) on one that has not.
 */
export const PROFILE_FLAGS = (Capability.DeprecateEof | Capability.FoundRows | Capability.IgnoreSpace | Capability.SessionTrack | Capability.LocalFiles) >>> 0;

/** Profile bit above the 32 capability bits: MARIADB_CLIENT_EXTENDED_METADATA (column definitions carry an extra field). */
const PROFILE_EXTENDED_METADATA = 2 ** 32;

/** A client's capability profile: its response-shaping flags, and whether it negotiated MariaDB extended metadata. */
export function clientProfile(capabilities: number, mariaDbCapabilities: number): number {
  return ((capabilities & PROFILE_FLAGS) >>> 0) + ((mariaDbCapabilities & MariaDbCapability.ExtendedMetadata) !== 0 ? PROFILE_EXTENDED_METADATA : 0);
}

/** The MariaDB extended capabilities a profile's backend connections must negotiate. */
export function profileMariaDb(profile: number): number {
  return profile >= PROFILE_EXTENDED_METADATA ? MariaDbCapability.ExtendedMetadata : 0;
}

/**
 * What the edge asks of every backend, before the profile's flags. CLIENT_MULTI_STATEMENTS only
 * when [mysql] multi_statements = "primary": otherwise the server itself refuses a second
 * statement, whatever the edge's lexer counted (e.g. under NO_BACKSLASH_ESCAPES).
 */
const BACKEND_BASE_CAPABILITIES =
  (Capability.LongPassword |
    Capability.LongFlag |
    Capability.Protocol41 |
    Capability.Transactions |
    Capability.SecureConnection |
    Capability.MultiResults |
    Capability.PsMultiResults |
    Capability.PluginAuth |
    Capability.PluginAuthLenencClientData) >>>
  0;

export interface PoolDeps {
  readonly epoch: () => EdgeEpoch;
  readonly topology: () => TopologyView;
  readonly collations: CollationCatalog;
  readonly states: StateTable<BackendConnectionState>;
  /** Processes serving this edge: each gets its share of pool_max and reserved_pool. */
  readonly processes: number;
  /** A backend could not be reached / was reached (the directory's local memory). */
  readonly onConnect: (backend: string, ok: boolean) => void;
  /** Greetings seen: the advertised version and MariaDB capabilities. */
  readonly identities: BackendIdentities;
  readonly logger: Logger;
}

export interface ResetCounts {
  resets: number;
  clean: number;
}

type Backend = DeepReadonly<MysqlBackendConfig>;

function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at);
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port: Number(address.slice(at + 1)) };
}

function tlsOptions(b: Backend): ConnectionOptions | null {
  if (!b.tls.enabled) return null;
  return {
    ...(b.tls.ca_path ? { ca: readFileSync(b.tls.ca_path) } : {}),
    ...(b.tls.client_cert_path ? { cert: readFileSync(b.tls.client_cert_path) } : {}),
    ...(b.tls.client_key_path ? { key: readFileSync(b.tls.client_key_path) } : {}),
    ...(b.tls.server_name ? { servername: b.tls.server_name } : {}),
    rejectUnauthorized: true,
  };
}

/** Address, credentials, TLS and multi-statements: when these change, the backend's pools take a new factory. */
function connectionKey(b: Backend, epoch: EdgeEpoch): string {
  return JSON.stringify([b.address, b.username, b.password, b.tls, b.proxy_protocol, epoch.multiStatements]);
}

export function backendCapabilities(profile: number, epoch: EdgeEpoch): number {
  return (BACKEND_BASE_CAPABILITIES | (profile % PROFILE_EXTENDED_METADATA) | (epoch.multiStatements === 'primary' ? Capability.MultiStatements : 0)) >>> 0;
}

/** One process's share of the configured sizes; deadlines from [mysql]. */
export function poolSizing(epoch: EdgeEpoch, b: Backend, processes: number): PoolSizing {
  const mysql = epoch.config.mysql;
  const share = (n: number) => Math.max(1, Math.ceil(n / processes));
  return {
    max: share(b.pool_max ?? mysql.pool_max_per_backend),
    reserved: b.role === 'primary' && b.reserved_pool > 0 ? share(b.reserved_pool) : 0,
    acquireTimeoutMs: mysql.pool_acquire_timeout_seconds * 1000,
    connectTimeoutMs: mysql.connect_timeout_seconds * 1000,
    resetTimeoutMs: mysql.connect_timeout_seconds * 1000,
    idleTimeoutMs: mysql.pool_idle_timeout_seconds * 1000,
    maxLifetimeMs: mysql.pool_max_lifetime_seconds * 1000,
    maxWaiters: mysql.max_connections,
  };
}

export class BackendPools {
  private readonly pools = new Map<string, BackendPool<BackendConnection>>();
  /** The client a per-client pool (a backend with proxy_protocol, see proxy-origin.ts) connects for. */
  private readonly origins = new Map<BackendPool<BackendConnection>, ProxiedAddresses>();
  /** Backends with proxy_protocol = true in the epoch `proxiedIn`. */
  private proxied = new Set<string>();
  private proxiedIn: EdgeEpoch | undefined;
  /** The same pools by profile, then backend (or backend and client address): looked up per query without building a key for most backends. */
  private readonly byProfile = new Map<number, Map<string, BackendPool<BackendConnection>>>();
  private readonly keys = new Map<string, string>();
  private readonly resetCounts = new Map<string, ResetCounts>();
  /** One bound per backend over its profiles' pools: pool_max (+ reserved) connections in all. */
  private readonly bounds = new Map<string, SharedCapacity>();

  constructor(private readonly deps: PoolDeps) {}

  /** The pool of `backend` for clients of capability `profile` (made on first use); `origin`: the client's addresses, for a backend with proxy_protocol. */
  pool(backend: string, profile: number, origin?: ProxiedAddresses): BackendPool<BackendConnection> | undefined {
    let byBackend = this.byProfile.get(profile);
    if (byBackend === undefined) this.byProfile.set(profile, (byBackend = new Map()));
    const key = origin === undefined ? backend : originPoolKey(backend, this.proxiedNow().has(backend), origin);
    const pool = byBackend.get(key);
    if (pool !== undefined && pool.isOpen) return pool;
    const epoch = this.deps.epoch();
    const config = epoch.backends.get(backend);
    if (!config) return undefined;
    const forClient = key === backend ? undefined : origin;
    if (forClient) this.pruneClientPools(backend);
    const sizing = poolSizing(epoch, config, this.deps.processes);
    const made = new BackendPool<BackendConnection>({ backend, factory: this.factory(backend, profile, epoch, forClient), ...sizing, shared: this.boundOf(backend, sizing) });
    this.pools.set(`${key}/${profile.toString(16)}`, made);
    if (forClient) this.origins.set(made, forClient);
    byBackend.set(key, made);
    this.keys.set(backend, connectionKey(config, epoch));
    return made;
  }

  private proxiedNow(): ReadonlySet<string> {
    const epoch = this.deps.epoch();
    if (this.proxiedIn !== epoch) {
      this.proxiedIn = epoch;
      this.proxied = new Set([...epoch.backends].filter(([, b]) => b.proxy_protocol).map(([name]) => name));
    }
    return this.proxied;
  }

  /** Per-client pools of `backend` left with no connection and no waiter are dropped (clients come and go). */
  private pruneClientPools(backend: string): void {
    for (const [key, pool] of this.pools) {
      if (pool.backend !== backend || !this.origins.has(pool)) continue;
      const stats = pool.stats();
      if (stats.total > 0 || stats.waiters > 0 || stats.pendingCreates > 0) continue;
      this.forget(key, pool);
      void pool.drain({ deadlineMs: 0 });
    }
  }

  private forget(key: string, pool: BackendPool<BackendConnection>): void {
    this.pools.delete(key);
    this.origins.delete(pool);
    for (const byBackend of this.byProfile.values()) for (const [k, p] of byBackend) if (p === pool) byBackend.delete(k);
  }

  /** The backend's bound across profiles, made or resized to `sizing`'s max + reserved. */
  private boundOf(backend: string, sizing: PoolSizing): SharedCapacity {
    const limit = sizing.max + (sizing.reserved ?? 0);
    let bound = this.bounds.get(backend);
    if (bound === undefined) this.bounds.set(backend, (bound = new SharedCapacity(limit, backend)));
    else if (bound.limit !== limit) bound.limit = limit;
    return bound;
  }

  /** (in use + waiters) / capacity of the backend's pool for `profile`; 0 before it exists. */
  pressure(backend: string, profile: number, origin?: ProxiedAddresses): number {
    const key = origin === undefined ? backend : originPoolKey(backend, this.proxiedNow().has(backend), origin);
    return this.byProfile.get(profile)?.get(key)?.pressure() ?? 0;
  }

  /** A new epoch: new sizes; new factories where the connection changed; removed backends drained. */
  configure(epoch: EdgeEpoch, removedDrainDeadlineMs: number): void {
    for (const [key, pool] of this.pools) {
      const config = epoch.backends.get(pool.backend);
      const origin = this.origins.get(pool);
      // a removed backend, or one that stopped reading the PROXY protocol (its per-client pools are no longer looked up)
      if (!config || (origin && !config.proxy_protocol)) {
        this.forget(key, pool);
        void pool.drain({ deadlineMs: removedDrainDeadlineMs });
        continue;
      }
      const sizing = poolSizing(epoch, config, this.deps.processes);
      this.boundOf(pool.backend, sizing); // the shared bound first: configure() dispatches against it
      pool.configure(sizing);
      const next = connectionKey(config, epoch);
      if (this.keys.get(pool.backend) !== next) pool.replaceFactory(this.factory(pool.backend, Number.parseInt(key.slice(key.lastIndexOf('/') + 1), 16), epoch, origin), 'connection-changed');
    }
    for (const [name, config] of epoch.backends) this.keys.set(name, connectionKey(config, epoch));
  }

  /** Drain actions and DNS pin changes: connections to `backend` close when released; `now` (offline_hard): lent ones too, at once. */
  retire(backend: string, reason: string, now = false): void {
    for (const pool of this.pools.values()) {
      if (pool.backend !== backend) continue;
      if (now) pool.closeConnections(reason);
      else pool.retire(reason);
    }
  }

  /** Retires the pools of backends that started draining, moved (DNS pin) or went offline_hard in this snapshot; returns their names. */
  onTopology(next: TopologyView, previous: TopologyView): string[] {
    const retired: string[] = [];
    for (const state of next.backends()) {
      const retirement = retirementOf(state, previous.backend(state.name));
      if (retirement === null) continue;
      this.retire(state.name, retirement.reason, retirement.now);
      retired.push(state.name);
    }
    return retired;
  }

  stats(): PoolStats[] {
    return [...this.pools.values()].map((p) => p.stats());
  }

  resets(): ReadonlyMap<string, ResetCounts> {
    return this.resetCounts;
  }

  async drain(deadlineMs: number): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.drain({ deadlineMs })));
  }

  /** One login per backend whose greeting this process has not seen (at start, new backends). */
  probe(timeoutMs: number): Promise<void> {
    const epoch = this.deps.epoch();
    const endpoints = this.deps.identities.unknown(epoch.backends.keys()).map((b) => this.endpoint(b));
    const open = (endpoint: BackendEndpoint, signal: AbortSignal) => openBackend(endpoint, backendCapabilities(0, epoch), [], signal, FORWARDABLE_MARIADB_CAPABILITIES);
    return probeBackends(endpoints, open, this.deps.identities, timeoutMs);
  }

  /**
   * Where and as whom `backend`'s pools connect now (also the KILL connections of src/kill). With
   * `origin` (clientAddressesOf a client socket, @dbproxy/runtime) a backend with proxy_protocol is
   * told the connection is that client's; without, it gets LOCAL. Connections opened for one session
   * (passthrough) take their endpoint here with the session's origin.
   */
  endpoint(backend: string, origin?: ProxiedAddresses): BackendEndpoint {
    const config = this.deps.epoch().backends.get(backend);
    if (!config) throw new Error(`backend ${backend} is no longer configured`);
    // proxy.test_hosts: TEST ONLY name answers standing in for DNS (the blue/green simulator)
    const address = testHostAddress(this.deps.topology().backend(backend)?.connectAddress ?? config.address, this.deps.epoch().config.proxy.test_hosts);
    const tls = tlsOptions(config);
    return { backend, ...splitAddress(address), username: config.username, password: config.password, tls: tls ? { options: tls } : null, proxyHeader: proxyHeaderFor(config, origin) };
  }

  private factory(backend: string, profile: number, epoch: EdgeEpoch, origin: ProxiedAddresses | undefined): ConnectionFactory<BackendConnection> {
    const capabilities = backendCapabilities(profile, epoch);
    const mariaDb = profileMariaDb(profile);
    let counts = this.resetCounts.get(backend);
    if (!counts) this.resetCounts.set(backend, (counts = { resets: 0, clean: 0 }));
    const resetCounts = counts;
    return {
      create: async (signal) => {
        const epoch = this.deps.epoch();
        const setup: SetupQuery[] = [];
        if (!this.deps.collations.loaded) setup.push({ sql: COLLATIONS_QUERY, rows: (rows) => this.deps.collations.load(rows) });
        const causal = epoch.config.mysql.read_consistency === 'causal';
        if (causal) setup.push({ sql: TRACK_LAST_GTID });
        try {
          const opened = await openBackend(this.endpoint(backend, origin), capabilities, setup, signal, mariaDb);
          this.deps.identities.learn(backend, opened.handshake);
          if ((opened.mariaDbCapabilities & mariaDb) !== mariaDb) {
            opened.socket.destroy();
            throw MysqlEdgeErrors.backendConnect(backend, 'the server lacks MARIADB_CLIENT_EXTENDED_METADATA, which this client negotiated');
          }
          this.deps.onConnect(backend, true);
          const mysql = epoch.config.mysql;
          const conn = new BackendConnection(opened, { backend, maxResultBytes: mysql.max_result_bytes, maxStatements: Math.min(256, mysql.max_prepared_statements), states: this.deps.states, logger: this.deps.logger });
          if (causal) conn.trackedAfterReset = TRACK_LAST_GTID;
          return conn;
        } catch (err) {
          this.deps.onConnect(backend, false);
          // the client reads only "backend ... is unavailable": the OS error and address are logged here
          this.deps.logger.warn({ backend, err }, 'mysql-edge could not open a backend connection');
          throw err;
        }
      },
      reset: (conn) => {
        if (conn.needsReset) resetCounts.resets++;
        else resetCounts.clean++;
        return conn.reset();
      },
      // offline_hard closes lent connections too: a session holding one is told why (ERR), not just that it was lost
      destroy: (conn, reason) => (reason === 'offline_hard' ? conn.fail(MysqlEdgeErrors.backendLost(backend, 'the backend was set offline_hard')) : conn.close(reason)),
      isAlive: (conn) => conn.alive,
    };
  }
}
