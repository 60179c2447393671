// The pg-edge service: PostgreSQL listeners (6432 read-write, 6433 read-only) in transparent or
// transaction mode, backends chosen through the topology service, drained on shutdown.
import type { Socket } from 'node:net';
import type { ConfigSnapshot } from '@dbproxy/config';
import type { RejectReason, RunningService, ServiceContext, ServiceDefinition } from '@dbproxy/runtime';
import { SqlRouter } from '@dbproxy/sql';
import { TopologyClient, TopologyView } from '@dbproxy/topology-client';
import { closeOfflineHard } from './transparent/offline-hard';
import { errorMessage } from '@dbproxy/util';
import { backendsReport, FIGURES_TOPIC, mergeFigures, type ProcessFigures } from './admin';
import { BackendDirectory } from './backend-directory';
import { CancelKeyRegistry } from './cancel-keys';
import type { EdgeContext, EdgeEpoch, ListenerRole } from './edge-context';
import { PgEdgeErrors, toErrorResponse } from './errors';
import { readStartup } from './frontend-startup';
import { loadFrontendTls } from '@dbproxy/runtime';
import { createPgEdgeMetrics } from './metrics';
import { zeroPgEdgeSeries } from './initial-series';
import { CANCEL_SUBJECT, encodeCancel, handleCancel, receiveCancel, refuse } from './session-common';
import { StartupShardKey } from './startup-shard-key';
import { TransactionPools } from './transaction/backend-pools';
import { TxShared } from './transaction/tx-shared';
import { routerRulesOf } from './transaction/sharding/statement-sharding';
import { startTransactionSession } from './transaction/tx-startup';
import { TransparentSession } from './transparent/transparent-session';

interface Closable {
  close(reason: string): void;
}

function buildEpoch(snapshot: ConfigSnapshot, topology: TopologyClient): EdgeEpoch {
  const config = snapshot.config;
  return {
    epoch: snapshot.epoch,
    config,
    directory: new BackendDirectory(config.postgres_backends, () => topology.current(), config.postgres.pressure_margin),
    shardKey: new StartupShardKey(config.postgres.sharding),
  };
}

export const pgEdgeService: ServiceDefinition = {
  name: 'pg-edge',
  adminKey: 'pg_edge',
  workers: (config) => config.postgres.workers,
  async start(ctx: ServiceContext): Promise<RunningService> {
    const topology = new TopologyClient({ bus: ctx.bus, protocol: 'postgres', config: ctx.config, instanceId: ctx.instanceId, readiness: ctx.readiness });
    let epoch = buildEpoch(ctx.config.current(), topology);
    const pools = new TransactionPools(() => topology.current());
    const shared = new TxShared(pools, (e) => new SqlRouter({ dialect: 'postgresql', shardRules: routerRulesOf(e.config.postgres.sharding), multiShard: e.config.postgres.sharding.multi_shard, cacheSize: e.config.postgres.classification_cache_size, allowedFunctions: [...e.config.postgres.allowed_functions], maxParseTokens: e.config.postgres.max_parse_tokens }));
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
    zeroPgEdgeSeries(metrics, { mode: pgConfig.postgres.routing_mode, shards: pgConfig.postgres.sharding.rules.length > 0 ? [...new Set(pgConfig.postgres_backends.map((b) => b.shard))] : [] });
    const edge: EdgeContext = {
      epoch: () => epoch,
      tls: loadFrontendTls(ctx.local),
      cancelKeys: new CancelKeyRegistry(),
      metrics,
      logger: ctx.logger,
      tracer: ctx.tracer,
      transparentLoad: new Map(),
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
        const entry = { close: () => session.destroy() };
        sessions.add(entry);
        transparent.add(session);
        socket.once('close', () => {
          sessions.delete(entry);
          transparent.delete(session);
        });
        void session.run();
        return;
      }
      const track = (session: Closable) => {
        sessions.add(session);
        socket.once('close', () => sessions.delete(session));
      };
      startTransactionSession(socket, listener, edge, current, shared, track).catch((err: unknown) => {
        ctx.logger.warn({ err: errorMessage(err) }, 'transaction session failed to start');
        refuse(socket, toErrorResponse(err, 'FATAL'));
      });
    };
    const reject = (socket: Socket, reason: RejectReason) => rejectConnection(socket, reason, edge);
    const pg = ctx.local.postgres;
    if (pg.enabled) {
      const maxConnections = () => epoch.config.postgres.max_connections;
      for (const [listener, address] of [['read_write', pg.read_write_listen], ['read_only', pg.read_only_listen]] as const) {
        await ctx.listen({ name: listener, address, maxConnections, onConnection: (socket) => serve(socket, listener), reject });
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

    return {
      async drain(deadline: number) {
        while (sessions.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      },
      async close() {
        unsubscribe();
        unwatch();
        cancels.unsubscribe();
        for (const session of sessions) session.close('shutdown');
        sessions.clear();
        shared.close();
        topology.stop();
        await pools.close(0);
      },
      edgeStatus: () => ({ protocol: 'postgres', sessions: sessions.size }),
    };
  },
};

/** Admission refused: read the startup packet so the client gets a PostgreSQL error (53300 / 57P03), and serve cancels anyway. */
function rejectConnection(socket: Socket, reason: RejectReason, edge: EdgeContext): void {
  const error = reason === 'draining' ? PgEdgeErrors.shuttingDown() : PgEdgeErrors.tooManyConnections(edge.epoch().config.postgres.max_connections);
  edge.metrics.startupRejections.inc({ reason });
  void readStartup(socket, { tls: { mode: 'disabled', context: undefined }, passthroughTls: false, deadlineMs: 5000 }).then((outcome) => {
    if (outcome.kind === 'cancel') return handleCancel(edge, 'transparent', outcome.processId, outcome.secretKey, socket);
    const target = outcome.kind === 'failed' && outcome.error === undefined ? undefined : outcome.socket;
    if (target) refuse(target, toErrorResponse(error, 'FATAL'));
    else socket.destroy();
  });
}
