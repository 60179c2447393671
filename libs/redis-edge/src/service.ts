// The redis-edge service: Redis listeners (6380 read-write, 6381 read-only) in connection mode
// or command mode, backends chosen through the topology service, worker processes, drain.
import type { Socket } from 'node:net';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import { edgeAdmin, type RejectReason, type RunningService, type ServiceContext, type ServiceDefinition } from '@dbproxy/runtime';
import { RedisAdmin } from './admin-sessions';
import { TopologyClient } from '@dbproxy/topology-client';
import { errorMessage } from '@dbproxy/util';
import { ReplyCacheControl } from './cache/cache-control';
import { CommandEdge } from './command/command-edge';
import { loadCommandTable } from './command/command-table-loader';
import { LinkDirectory } from './command/link-directory';
import { CommandSession, type ListenerRole } from './command/session';
import { ConnectionEdge } from './connection/connection-edge';
import { ConnectionSession } from './connection/connection-session';
import { errorReply, RedisEdgeErrors } from './errors';
import { endpointKey, type NodeEndpoint } from './io/endpoint';
import { TickFlusher } from './io/tick-flusher';
import { closeOfflineHard } from './offline-hard';
import { createRedisEdgeMetrics, publishCommandCounts, type RedisEdgeMetrics } from './metrics';
import { zeroRedisEdgeSeries } from './initial-series';

interface Closable {
  close(reason: string): void;
  sweepIdle?(sweepMs: number): void;
  closeIfIdle?(reason: string): void;
  /** The shutdown deadline passed: `-ERR` first, then close. */
  shutDown?(): void;
}

/** How often idle command-mode clients are looked for. */
const IDLE_SWEEP_MS = 1000;

/** Where COMMAND INFO is read from: cluster seeds, or the configured backends (primaries first). */
function tableSources(config: DeepReadonly<DbproxyConfig>): NodeEndpoint[] {
  const c = config.redis.cluster;
  if (c.enabled) {
    return c.seeds.map((address) => ({ key: endpointKey(address, 0, false), name: address, shard: '', address, role: 'primary', db: 0, username: c.username, password: c.password, readOnly: false }));
  }
  return [...config.redis_backends]
    .sort((a, b) => (a.role === b.role ? 0 : a.role === 'primary' ? -1 : 1))
    .map((b) => ({ key: endpointKey(b.address, b.db, false), name: b.name, shard: b.shard, address: b.address, role: b.role, db: b.db, username: b.username, password: b.password, readOnly: false, tls: b.tls }));
}

/** Reads the command table until it succeeds (every 2 s), reporting readiness meanwhile. */
function keepLoadingTable(ctx: ServiceContext, edge: CommandEdge, links: LinkDirectory, stopped: () => boolean): void {
  const attempt = async (): Promise<void> => {
    if (stopped() || edge.table) return;
    const config = ctx.config.current().config;
    try {
      edge.table = await loadCommandTable(links, tableSources(config), config.redis.connect_timeout_seconds * 1000);
      ctx.readiness.set('command-table', 'ready', `${edge.table.size} commands`);
    } catch (err) {
      ctx.readiness.set('command-table', 'unready', errorMessage(err));
      setTimeout(() => void attempt(), 2000).unref();
    }
  };
  ctx.readiness.set('command-table', 'unready', 'reading COMMAND INFO from the backends');
  void attempt();
}

function startMetricsPublisher(links: LinkDirectory, metrics: RedisEdgeMetrics): NodeJS.Timeout {
  const timer = setInterval(() => {
    for (const route of links.allRoutes()) publishCommandCounts(metrics.commands, route.endpoint.shard, route.endpoint.name, route.counts);
  }, 1000);
  timer.unref();
  return timer;
}

export const redisEdgeService: ServiceDefinition = {
  name: 'redis-edge',
  adminKey: 'redis_edge',
  workers: (config) => config.redis.workers,
  async start(ctx: ServiceContext): Promise<RunningService> {
    const topology = new TopologyClient({ bus: ctx.bus, protocol: 'redis', config: ctx.config, instanceId: ctx.instanceId, readiness: ctx.readiness });
    const flusher = new TickFlusher();
    const replies = new TickFlusher();
    const redis = () => ctx.config.current().config.redis;
    const metrics = createRedisEdgeMetrics(ctx.metrics, { leases: () => links.leaseCounts(), links: () => links.linkCount });
    zeroRedisEdgeSeries(metrics, { mode: redis().mode, backends: ctx.config.current().config.redis_backends });
    const links: LinkDirectory = new LinkDirectory({
      link: { connectTimeoutMs: redis().connect_timeout_seconds * 1000, limits: { maxBulkLength: Math.min(redis().max_bulk_bytes, 0x7fffffff), maxNestingDepth: redis().max_reply_depth }, flusher, afterRead: () => replies.flushNow() },
      commandTimeoutMs: () => redis().command_timeout_seconds * 1000,
      maxLeasesPerNode: () => redis().max_blocking_leases_per_node,
      onLease: (event) => metrics.leaseEvents.inc({ event }),
      onConnectFailed: (endpoint, err) => ctx.logger.warn({ backend: endpoint.name, address: endpoint.address, err }, 'redis-edge could not open a backend connection'),
    });
    const m = metrics;
    await topology.start();
    const admin: RedisAdmin = new RedisAdmin(
      () => ctx.config.current().epoch,
      () => {
        const open = links.linksByBackend();
        for (const [backend, n] of connections.connections()) if (n > 0) open.set(backend, (open.get(backend) ?? 0) + n);
        return open;
      },
    );
    const edge = new CommandEdge(ctx.config.current(), links, flusher, replies, m, topology, ctx.logger, ctx.tracer, admin);
    const cache = new ReplyCacheControl(edge, links, ctx.logger, ctx.metrics);
    cache.configure(ctx.config.current().config, ctx.local.redis.enabled && ctx.servesConnections);
    const connections = new ConnectionEdge(ctx.config, topology, m, ctx.tracer, admin);
    let stopped = false;
    const sessions = new Set<Closable>();
    const unwatch = topology.onChange((view, previous) => {
      edge.rebuild();
      cache.topologyChanged();
      closeOfflineHard(view, previous, links, sessions);
    });
    const unsubscribe = ctx.config.onChange((next) => {
      edge.rebuild(next.config);
      cache.configure(next.config, ctx.local.redis.enabled && ctx.servesConnections);
      if (next.config.redis.mode === 'command' && !edge.table) keepLoadingTable(ctx, edge, links, () => stopped);
    });
    if (ctx.local.redis.enabled && redis().mode === 'command') keepLoadingTable(ctx, edge, links, () => stopped);
    const publisher = startMetricsPublisher(links, m);
    const idleSweep = setInterval(() => {
      for (const session of sessions) session.sweepIdle?.(IDLE_SWEEP_MS);
    }, IDLE_SWEEP_MS);
    idleSweep.unref();

    const serve = (socket: Socket, listener: ListenerRole): void => {
      socket.setNoDelay(true);
      const session = redis().mode === 'command' ? new CommandSession(socket, listener, edge) : new ConnectionSession(socket, listener, connections);
      sessions.add(session);
      admin.add(session);
      socket.once('close', () => {
        sessions.delete(session);
        admin.delete(session);
      });
    };
    const reject = (socket: Socket, reason: RejectReason): void => {
      socket.end(errorReply(reason === 'draining' ? RedisEdgeErrors.shuttingDown() : RedisEdgeErrors.maxClients()));
    };
    const local = ctx.local.redis;
    if (local.enabled) {
      const maxConnections = () => redis().max_connections;
      for (const [listener, address] of [['read_write', local.read_write_listen], ['read_only', local.read_only_listen]] as const) {
        await ctx.listen({ name: listener, address, maxConnections, clientSpeaksFirst: true, onConnection: (socket) => serve(socket, listener), reject });
      }
    } else ctx.readiness.set('listeners', 'ready', 'redis.enabled = false');
    ctx.provide('redis-edge', () => ({ pid: process.pid, sessions: sessions.size, backend_connections: links.linkCount, leases: Object.fromEntries(links.leaseCounts()) }));
    ctx.addAdminRoute({
      method: 'GET',
      url: '/redis/edge',
      handler: async () => ({ mode: redis().mode, cluster: edge.cluster, commands: edge.table?.size ?? 0, shards: edge.routes.shards.map((s) => ({ shard: s.name, primary: s.primary?.endpoint.address ?? null, replicas: s.replicas.map((r) => r.route.endpoint.address) })), processes: await ctx.gather('redis-edge') }),
    });

    return {
      async drain(deadline: number) {
        // Command-mode sessions close as soon as nothing is owed to them; connection-mode sessions run until the deadline.
        while (sessions.size > 0 && Date.now() < deadline) {
          for (const session of sessions) session.closeIfIdle?.('draining');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      async close() {
        stopped = true;
        unsubscribe();
        unwatch();
        clearInterval(publisher);
        clearInterval(idleSweep);
        for (const session of sessions) {
          if (session.shutDown) session.shutDown();
          else session.close('shutdown');
        }
        sessions.clear();
        cache.stop();
        links.close();
        topology.stop();
      },
      edgeStatus: () => ({ protocol: 'redis', sessions: ctx.activeConnections() }),
      edgeAdmin: edgeAdmin(ctx, 'redis', admin.source(), admin.pause),
    };
  },
};
