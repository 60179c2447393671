// The pg-edge service: PostgreSQL listeners (6432 read-write, 6433 read-only) in transparent or
// transaction mode, backends chosen through the topology service, drained on shutdown.
import type { Socket } from 'node:net';
import type { ConfigSnapshot } from '@dbproxy/config';
import { edgeAdmin, PauseGate, SessionIds, type RejectReason, type RunningService, type ServiceContext, type ServiceDefinition } from '@dbproxy/runtime';
import { SqlRouter } from '@dbproxy/sql';
import { TopologyClient, TopologyView } from '@dbproxy/topology-client';
import { closeOfflineHard } from './transparent/offline-hard';
import { errorMessage } from '@dbproxy/util';
import { backendsReport, FIGURES_TOPIC, mergeFigures, type ProcessFigures } from './admin';
import { AdminSessions } from './admin-sessions';
import { BackendDirectory } from './backend-directory';
import { CancelKeyRegistry } from './cancel-keys';
import { loginDeadlineMs, type EdgeContext, type EdgeEpoch, type ListenerRole } from './edge-context';
import { isInternalError, PgEdgeErrors, toErrorResponse } from './errors';
import { loadFrontendTls } from '@dbproxy/runtime';
import { IdleSweep } from './idle-sweep';
import { createPgEdgeMetrics } from './metrics';
import { zeroPgEdgeSeries } from './initial-series';
import { CANCEL_SUBJECT, encodeCancel, receiveCancel, refuse, refuseAtStartup } from './session-common';
import { StartupRoutes } from './startup-routes';
import { TransactionPools } from './transaction/backend-pools';
import { ReplayPositions } from './transaction/causal-lsn';
import { TxShared } from './transaction/tx-shared';
import { routerRulesOf } from './transaction/sharding/statement-sharding';
import { startTransactionSession } from './transaction/tx-startup';
import type { TransactionSession } from './transaction/tx-session';
import { TransparentSession } from './transparent/transparent-session';

interface Closable {
  close(reason: string): void;
  /** The shutdown deadline passed: FATAL 57P01 where the protocol allows, then close. */
  shutDown?(): void;
}

function buildEpoch(snapshot: ConfigSnapshot, topology: TopologyClient): EdgeEpoch {
  const config = snapshot.config;
  return {
    epoch: snapshot.epoch,
    config,
    directory: new BackendDirectory(config.postgres_backends, () => topology.current(), config.postgres.pressure_margin, unreachableMs(config)),
    shardKey: new StartupRoutes(config),
  };
}

/** How long a replica that refused a connection is skipped: until topology had time to mark it down (mysql-edge's rule). */
function unreachableMs(config: ConfigSnapshot['config']): number {
  return Math.max(2_000, config.health.interval_seconds * 1000 * (config.health.failures_before_down + 1));
}

export const pgEdgeService: ServiceDefinition = {
  name: 'pg-edge',
  adminKey: 'pg_edge',
  workers: (config) => config.postgres.workers,
  async start(ctx: ServiceContext): Promise<RunningService> {
    const topology = new TopologyClient({ bus: ctx.bus, protocol: 'postgres', config: ctx.config, instanceId: ctx.instanceId, readiness: ctx.readiness });
    let epoch = buildEpoch(ctx.config.current(), topology);
    const pools = new TransactionPools(() => topology.current());
    const shared = new TxShared(pools, (e) => new SqlRouter({ dialect: 'postgresql', shardRules: routerRulesOf(e.config.postgres.sharding), multiShard: e.config.postgres.sharding.multi_shard, cacheSize: e.config.postgres.classification_cache_size, allowedFunctions: [...e.config.postgres.allowed_functions], maxParseTokens: e.config.postgres.max_parse_tokens }), new ReplayPositions(ctx.metrics));
    topology.onHealth((report) => shared.replay.observed(report.backend, report.position));
    pools.configure(epoch);
    shared.resultBudget.limit = epoch.config.postgres.max_buffered_result_bytes;
    const shardOf = new Map(epoch.config.postgres_backends.map((b) => [b.name, b]));
    // a primary whose workers serve every connection has empty pools: only the workers' count
    const metrics = createPgEdgeMetrics(
      ctx.metrics,
      () => (ctx.servesConnections ? pools.stats() : []).map((stats) => ({ stats, shard: shardOf.get(stats.backend)?.shard ?? '', role: topology.backend(stats.backend)?.role ?? shardOf.get(stats.backend)?.role ?? '' })),
      () => shared.resultBudget.used,
    );
    const pgConfig = epoch.config;
    zeroPgEdgeSeries(metrics, { mode: pgConfig.postgres.routing_mode, routes: epoch.shardKey.routes.series(), shards: pgConfig.postgres.sharding.rules.length > 0 ? [...new Set(pgConfig.postgres_backends.map((b) => b.shard))] : [] });
    const edge: EdgeContext = {
      epoch: () => epoch,
      tls: loadFrontendTls(ctx.local),
      cancelKeys: new CancelKeyRegistry(),
      metrics,
      logger: ctx.logger,
      tracer: ctx.tracer,
      transparentLoad: new Map(),
      sessionIds: new SessionIds('p'),
      pause: new PauseGate(),
      counts: { statements: 0 },
      idle: new IdleSweep(),
      broadcastCancel: (processId, secretKey) => {
        try {
          ctx.bus.publish(CANCEL_SUBJECT, encodeCancel(processId, secretKey), { origin: ctx.instanceId });
        } catch (err) {
          ctx.logger.warn({ err: errorMessage(err) }, 'could not offer a cancel to other pg-edge processes');
        }
      },
    };
    const cancels = ctx.bus.subscribe(CANCEL_SUBJECT, (message) => receiveCancel(edge, message.data));
    const sessions = new Set<Closable>();
    const admin = new AdminSessions(() => pools.stats(), () => edge.counts.statements);
    const unsubscribe = ctx.config.onChange((next) => {
      epoch = buildEpoch(next, topology);
      shardOf.clear();
      for (const b of epoch.config.postgres_backends) shardOf.set(b.name, b);
      pools.configure(epoch);
      shared.resultBudget.limit = epoch.config.postgres.max_buffered_result_bytes;
    });
    const transparent = new Set<TransparentSession>();
    const unwatch = topology.onChange((view, previous) => {
      pools.onTopology(view, previous);
      closeOfflineHard(transparent, view, previous);
    });
    await topology.start();
    pools.onTopology(topology.current(), TopologyView.empty('postgres'));

    const serve = (socket: Socket, listener: ListenerRole) => {
      const current = epoch;
      socket.on('error', () => socket.destroy());
      if (current.config.postgres.routing_mode === 'transparent') {
        const session = new TransparentSession(socket, listener, edge, current);
        const entry = { close: (reason: string) => session.destroy(reason), shutDown: () => session.shutDown() };
        sessions.add(entry);
        transparent.add(session);
        admin.add(session);
        socket.once('close', () => {
          sessions.delete(entry);
          transparent.delete(session);
          admin.delete(session);
        });
        void session.run();
        return;
      }
      const track = (session: TransactionSession) => {
        sessions.add(session);
        admin.add(session);
        socket.once('close', () => {
          sessions.delete(session);
          admin.delete(session);
        });
      };
      startTransactionSession(socket, listener, edge, current, shared, track).catch((err: unknown) => {
        if (isInternalError(err)) ctx.logger.error({ err }, 'pg-edge internal error: transaction session failed to start');
        else ctx.logger.warn({ err: errorMessage(err) }, 'transaction session failed to start');
        refuse(socket, toErrorResponse(err, 'FATAL'));
      });
    };
    const reject = (socket: Socket, reason: RejectReason) => rejectConnection(socket, reason, edge);
    const pg = ctx.local.postgres;
    if (pg.enabled) {
      const maxConnections = () => epoch.config.postgres.max_connections;
      for (const [listener, address] of [['read_write', pg.read_write_listen], ['read_only', pg.read_only_listen]] as const) {
        await ctx.listen({ name: listener, address, maxConnections, clientSpeaksFirst: true, onConnection: (socket) => serve(socket, listener), reject });
      }
    }
    ctx.provide(FIGURES_TOPIC, (): ProcessFigures => ({ pid: process.pid, sessions: sessions.size, pools: pools.stats(), transparent: Object.fromEntries(edge.transparentLoad) }));
    ctx.addAdminRoute({
      method: 'GET',
      url: '/postgres/backends',
      handler: async () => {
        return backendsReport(epoch.config.postgres.routing_mode, epoch.directory, mergeFigures((await ctx.gather(FIGURES_TOPIC)) as ProcessFigures[]));
      },
    });
    if (!pg.enabled) ctx.readiness.set('listeners', 'ready', 'postgres.enabled = false');
    const adminInterface = edgeAdmin(ctx, 'postgres', admin.source(), edge.pause);

    return {
      async drain(deadline: number) {
        while (sessions.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      },
      async close() {
        unsubscribe();
        unwatch();
        cancels.unsubscribe();
        for (const session of sessions) {
          if (session.shutDown) session.shutDown();
          else session.close('shutdown');
        }
        sessions.clear();
        edge.idle.close();
        shared.close();
        topology.stop();
        await pools.close(0);
      },
      edgeStatus: () => ({ protocol: 'postgres', sessions: sessions.size }),
      edgeAdmin: adminInterface,
    };
  },
};

/**
 * Admission refused: the SSLRequest answered (TLS when configured) and the startup packet read, so
 * the client prints the PostgreSQL error (53300 / 57P03); cancels are served anyway. A refused
 * connection is not counted against max_connections: it gets at most 5 s (or the login deadline).
 */
function rejectConnection(socket: Socket, reason: RejectReason, edge: EdgeContext): void {
  const config = edge.epoch().config;
  const error = reason === 'draining' ? PgEdgeErrors.shuttingDown() : PgEdgeErrors.tooManyConnections(config.postgres.max_connections);
  edge.metrics.startupRejections.inc({ reason });
  void refuseAtStartup(edge, socket, toErrorResponse(error, 'FATAL'), Math.min(5000, loginDeadlineMs(config)));
}
