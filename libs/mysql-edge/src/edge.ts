// One mysql-edge process: the epoch in force, backend pools, catalogs, telemetry, the sessions it
// serves and the one deadline sweep that checks them all (no timer per session).
import { generateKeyPair } from 'node:crypto';
import { ResultCache } from './cache/result-cache';
import type { Socket } from 'node:net';
import type { Tracer } from '@opentelemetry/api';
import type { ConfigSnapshot } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import type { RejectReason, ServiceContext } from '@dbproxy/runtime';
import type { TopologyClient, TopologyView } from '@dbproxy/topology-client';
import { BoundedLru } from '@dbproxy/util';
import { BACKEND_MOVES, BACKEND_STATES, type BackendConnectionState } from './backend/backend-connection';
import { BackendIdentities } from './backend/backend-identity';
import { BackendPools } from './backend/backend-pools';
import { CollationCatalog } from './backend/collations';
import { ParkedLeases } from './backend/parked-leases';
import { FanoutCoordinator } from './fanout/fanout-coordinator';
import { Pipelines } from './backend/pipelines';
import { StatementCatalog } from './backend/statement-catalog';
import { SESSION_MOVES, SESSION_STATES, type AdvertisedServer, type CoarseClock, type EdgeContext, type SessionState } from './edge-context';
import { buildEpoch, type EdgeEpoch } from './epoch';
import { MysqlEdgeErrors, toMysqlError } from './errors';
import type { RsaKeys } from './frontend/client-login';
import { loadFrontendTls, PauseGate, poolSnapshotOf, SessionIds, type FrontendTls, type SessionSource } from '@dbproxy/runtime';
import { KillSwitch } from './kill/kill-switch';
import { QueryCounters, createEdgeMetrics, type EdgeMetrics } from './metrics';
import { zeroMysqlEdgeSeries } from './initial-series';
import { ClientSession } from './session/client-session';
import { adminKill, describeSession } from './session/session-admin';
import type { ListenerRole } from './session/route-planner';
import { StateTable } from './state-machine';
import { CausalReads } from './causal/causal-reads';
import { errPacket } from './wire';

const SWEEP_INTERVAL_MS = 1000;
const SHA2_CACHE_SIZE = 10_000;

function rsaKeys(): Promise<RsaKeys> {
  return new Promise((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength: 2048 }, (err, publicKey, privateKey) => {
      if (err) return reject(err);
      resolve({ privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    }),
  );
}

/**
 * Spans cost per query, so they are made only when someone records them: an OTLP endpoint is
 * configured, or a tracer provider was registered in the process (a probe span says; it is never
 * ended, so never exported).
 */
function tracesRecorded(ctx: ServiceContext): boolean {
  if (ctx.local.telemetry.otlp_endpoint) return true;
  return ctx.tracer.startSpan('mysql-edge tracing probe').isRecording();
}

export class MysqlEdge implements EdgeContext {
  private current: EdgeEpoch;
  readonly pools: BackendPools;
  readonly catalog = new StatementCatalog();
  readonly parked = new ParkedLeases();
  readonly pipelines = new Pipelines();
  readonly identities = new BackendIdentities();
  readonly collations = new CollationCatalog();
  readonly tls: FrontendTls;
  rsa: RsaKeys | undefined;
  readonly sha2Cache = new BoundedLru<string, Buffer>(SHA2_CACHE_SIZE);
  readonly metrics: EdgeMetrics;
  readonly queries = new QueryCounters();
  readonly clock: { now: number } & CoarseClock = { now: Date.now() };
  readonly sessionStates: StateTable<SessionState>;
  readonly backendStates: StateTable<BackendConnectionState>;
  readonly tracer: Tracer | null;
  readonly logger: Logger;
  draining = false;
  readonly sessionIds = new SessionIds('m');
  readonly pause = new PauseGate();
  commandsRun = 0;
  readonly kills: KillSwitch;
  readonly fanout: FanoutCoordinator;
  readonly causal: CausalReads;
  readonly cache: ResultCache;
  private readonly sessions = new Set<ClientSession>();
  private readonly sweepTimer: NodeJS.Timeout;

  constructor(
    ctx: ServiceContext,
    private readonly topology: TopologyClient,
    processes: number,
  ) {
    this.logger = ctx.logger;
    this.tracer = tracesRecorded(ctx) ? ctx.tracer : null;
    this.tls = loadFrontendTls(ctx.local);
    this.current = buildEpoch(ctx.config.current(), () => topology.current(), undefined);
    this.sessionStates = new StateTable('mysql-session', SESSION_STATES, SESSION_MOVES, ctx.logger);
    this.backendStates = new StateTable('mysql-backend', BACKEND_STATES, BACKEND_MOVES, ctx.logger);
    this.pools = new BackendPools({
      epoch: () => this.current,
      topology: () => topology.current(),
      collations: this.collations,
      states: this.backendStates,
      processes,
      identities: this.identities,
      logger: ctx.logger,
      onConnect: (backend, ok) => (ok ? this.current.directory.markReachable(backend) : this.current.directory.markFailed(backend, Date.now())),
    });
    this.metrics = createEdgeMetrics(ctx.metrics, {
      queries: this.queries,
      // a primary whose workers serve every connection has empty pools: only the workers' count
      pools: ctx.servesConnections ? () => this.pools.stats() : () => [],
      backends: () => [...this.current.backends.keys()],
      roleOf: (backend) => topology.backend(backend)?.role ?? this.current.backends.get(backend)?.role ?? 'unknown',
      shardOf: (backend) => topology.backend(backend)?.shard ?? this.current.backends.get(backend)?.shard ?? 'unknown',
      resets: () => this.pools.resets(),
      transitions: () => [...this.sessionStates.snapshot(), ...this.backendStates.snapshot()],
      classification: () => this.current.router.stats(),
    });
    zeroMysqlEdgeSeries(this.metrics, [...this.current.backends.values()], this.current.routes.series());
    this.causal = new CausalReads(ctx.metrics);
    topology.onHealth((report) => this.causal.observed(report.backend, report.position));
    this.fanout = new FanoutCoordinator({ epoch: () => this.current, pools: this.pools, metrics: ctx.metrics, logger: ctx.logger, bus: ctx.bus, instanceId: ctx.instanceId });
    this.cache = new ResultCache({ bus: ctx.bus, instanceId: ctx.instanceId, metrics: ctx.metrics });
    this.cache.configure(this.current.config);
    this.kills = new KillSwitch({ bus: ctx.bus, logger: ctx.logger, endpoint: (backend) => this.pools.endpoint(backend), timeoutMs: () => this.current.config.mysql.connect_timeout_seconds * 1000 });
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** RSA keys, and every backend's greeting read once (bounded by connect_timeout_seconds) so the first clients see the primary's version. */
  async start(): Promise<void> {
    const probe = this.pools.probe(this.current.config.mysql.connect_timeout_seconds * 1000);
    this.rsa = await rsaKeys();
    await this.kills.start();
    await probe;
  }

  advertised(): AdvertisedServer {
    const epoch = this.current;
    const primary = this.topology.current().primary(epoch.defaultShard)?.name ?? epoch.config.mysql_backends.find((b) => b.shard === epoch.defaultShard && b.role === 'primary')?.name;
    return { serverVersion: this.identities.version(epoch.config.mysql.server_version, primary), mariaDbCapabilities: this.identities.mariaDbCapabilities(epoch.backends.keys()) };
  }

  epoch(): EdgeEpoch {
    return this.current;
  }

  /** A new configuration epoch: new sessions (and unpinned ones at their next statement) use it. */
  applyConfig(snapshot: ConfigSnapshot): void {
    this.current = buildEpoch(snapshot, () => this.topology.current(), this.current);
    this.parked.giveBackAll();
    this.cache.configure(this.current.config);
    this.pools.configure(this.current, this.current.config.proxy.shutdown_timeout_seconds * 1000);
    void this.pools.probe(this.current.config.mysql.connect_timeout_seconds * 1000);
  }

  /** Drain actions and DNS pins: the backend's connections close as they come back, parked ones at once. */
  onTopology(next: TopologyView, previous: TopologyView): void {
    for (const backend of this.pools.onTopology(next, previous)) this.parked.giveBackAll(backend);
  }

  accept(socket: Socket, listener: ListenerRole): void {
    socket.setNoDelay(true);
    this.sessions.add(new ClientSession(socket, listener, this));
  }

  /** Admission refused: an ERR packet instead of the greeting (1040 or 1053), then the socket ends. */
  reject(socket: Socket, reason: RejectReason): void {
    const err = reason === 'draining' ? MysqlEdgeErrors.shuttingDown() : MysqlEdgeErrors.tooManyConnections(this.current.config.mysql.max_connections);
    const wire = toMysqlError(err);
    this.metrics.errors.inc({ code: String(wire.code) });
    socket.end(errPacket(0, wire, 0));
  }

  sessionClosed(session: object): void {
    this.sessions.delete(session as ClientSession);
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const previous = this.clock.now;
    const now = (this.clock.now = Date.now());
    for (const session of this.sessions) session.checkDeadline(now);
    // connections parked since before the previous sweep were not used for at least one interval
    this.parked.sweep(previous);
  }

  /** Stop taking work: idle sessions close now, busy ones after their command, pinned ones when their pin ends or at the deadline. */
  async drain(deadline: number): Promise<void> {
    this.draining = true;
    this.parked.sweep(Number.POSITIVE_INFINITY);
    for (const session of this.sessions) if (session.state === 'ready' && !session.pinned) session.close('draining', true);
    while (this.sessions.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    for (const session of [...this.sessions]) session.shutDown();
    await this.pools.drain(0);
    await this.kills.close();
    this.cache.close();
  }

  /** This process's sessions and pools for the admin interface (GET /sessions, GET /pools, kill). */
  sessionSource(): SessionSource {
    return {
      sessions: () => [...this.sessions].map(describeSession),
      pools: () => this.pools.stats().map(poolSnapshotOf),
      kill: (id, reason) => {
        for (const session of this.sessions) {
          if (session.adminId !== id) continue;
          adminKill(session, reason);
          return true;
        }
        return false;
      },
      statementsTotal: () => this.commandsRun,
    };
  }

  /** This process's pool figures (GET /mysql/backends gathers them from every worker). */
  poolReport(): unknown {
    return { pid: process.pid, sessions: this.sessions.size, pools: this.pools.stats(), statements: this.catalog.size };
  }
}
