// The mysql-edge service: MySQL listeners (6033 read-write, 6034 read-only) with admission, pools
// and sessions per process (worker processes when [mysql] workers > 1 and NATS is configured),
// backends chosen through the topology service, drained on shutdown.
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import { edgeAdmin, usableCpus, type RunningService, type ServiceContext, type ServiceDefinition } from '@dbproxy/runtime';
import { TopologyClient } from '@dbproxy/topology-client';
import { backendsReport } from './admin';
import { cacheReport } from './cache/cache-report';
import { MysqlEdge } from './edge';

/** Processes serving the edge, as the runtime decides it: workers need NATS (the in-process bus cannot be shared). */
function processCount(config: DeepReadonly<DbproxyConfig>): number {
  if (!config.bus.nats_url) return 1;
  return config.mysql.workers === 0 ? usableCpus() : config.mysql.workers;
}

export const mysqlEdgeService: ServiceDefinition = {
  name: 'mysql-edge',
  adminKey: 'mysql_edge',
  workers: (config) => config.mysql.workers,
  async start(ctx: ServiceContext): Promise<RunningService> {
    const topology = new TopologyClient({ bus: ctx.bus, protocol: 'mysql', config: ctx.config, instanceId: ctx.instanceId, readiness: ctx.readiness });
    const edge = new MysqlEdge(ctx, topology, processCount(ctx.local));
    await edge.start();
    const unsubscribe = ctx.config.onChange((next) => edge.applyConfig(next));
    const unwatch = topology.onChange((next, previous) => edge.onTopology(next, previous));
    await topology.start();
    const mysql = ctx.local.mysql;
    if (mysql.enabled) {
      const maxConnections = () => edge.epoch().config.mysql.max_connections;
      for (const [name, address] of [['read_write', mysql.read_write_listen], ['read_only', mysql.read_only_listen]] as const) {
        await ctx.listen({ name, address, maxConnections, onConnection: (socket) => edge.accept(socket, name), reject: (socket, reason) => edge.reject(socket, reason) });
      }
    } else {
      ctx.readiness.set('listeners', 'ready', 'mysql.enabled = false');
    }
    ctx.provide('pools', () => edge.poolReport());
    const healthError = (name: string) => {
      const last = topology.lastHealth(name);
      return last && !last.up ? last.error : undefined;
    };
    ctx.provide('cache', () => edge.cache.report());
    const admin = edgeAdmin(ctx, 'mysql', edge.sessionSource(), edge.pause);
    ctx.addAdminRoute({ method: 'GET', url: '/mysql/backends', handler: async () => backendsReport(await ctx.gather('pools'), topology.current(), healthError) });
    ctx.addAdminRoute({ method: 'GET', url: '/mysql/cache', handler: async () => cacheReport(await ctx.gather('cache')) });
    return {
      drain: (deadline: number) => edge.drain(deadline),
      async close() {
        unsubscribe();
        unwatch();
        topology.stop();
        await edge.close();
      },
      edgeStatus: () => ({ protocol: 'mysql', sessions: ctx.activeConnections() }),
      edgeAdmin: admin,
    };
  },
};
