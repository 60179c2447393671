// Test harness: redis-edge beside the real topology service, both in one runtime in this process on
// the embedded bus, against real Redis servers (standalone shards or a Redis Cluster) started by
// @dbproxy/testing. Topology health-checks every backend every 0.3 s, reads a cluster's slot map
// from [redis.cluster] seeds and answers the edge's refresh requests (as after a MOVED).
import { Redis, type RedisOptions } from 'ioredis';
import { type TopologySnapshot } from '@dbproxy/bus';
import { backendToml, commonToml, startTestRuntime, type TestRuntime, type TestRuntimeOptions } from '@dbproxy/runtime/testing';
import { freePort } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { redisEdgeService } from '../src';

export { HEALTH_INTERVAL_SECONDS } from '@dbproxy/runtime/testing';

export interface BackendSpec {
  readonly name: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  readonly password?: string;
  /** Further lines of the backend's table (e.g. its [redis_backends.tls] sub-table). */
  readonly extra?: string;
}

export interface EdgeOptions {
  readonly mode: 'connection' | 'command';
  readonly backends?: readonly BackendSpec[];
  /** Lines added inside [redis]. */
  readonly redis?: string;
  /** Lines of [redis.sharding]. */
  readonly sharding?: string;
  /** Cluster seed ports ([redis.cluster] enabled). */
  readonly clusterSeeds?: readonly number[];
  readonly clusterPassword?: string;
  /** Lines added inside [topology] (e.g. redis_slot_refresh_seconds). */
  readonly topology?: string;
  /** Extra top-level TOML (e.g. [proxy] settings). */
  readonly extra?: string;
  /** What startEdge waits for (default: /readyz answers 200). */
  readonly until?: TestRuntimeOptions['until'];
}

/** GET /topology/redis of the topology service running beside the edge. */
export interface TopologyReport {
  readonly snapshot: TopologySnapshot | null;
  readonly [key: string]: unknown;
}

/** The runtime's admin reads (readiness, metrics); `stop` also disconnects the clients made here. */
export interface EdgeHarness extends Pick<TestRuntime, 'runtime' | 'admin' | 'readyz' | 'metrics' | 'metric' | 'stop'> {
  readonly rwPort: number;
  readonly roPort: number;
  client(options?: RedisOptions & { readOnly?: boolean }): Redis;
  /** The topology service's current view of the Redis backends. */
  topology(): Promise<TopologyReport>;
}

function redisBackendToml(b: BackendSpec): string {
  return backendToml('redis_backends', { ...b, address: `127.0.0.1:${b.port}`, extra: `${b.password ? `password = "${b.password}"` : ''}\n${b.extra ?? ''}` });
}

function clusterToml(options: EdgeOptions): string {
  if (!options.clusterSeeds) return '';
  const seeds = options.clusterSeeds.map((p) => `"127.0.0.1:${p}"`).join(', ');
  return `[redis.cluster]\nenabled = true\nseeds = [${seeds}]\n${options.clusterPassword ? `password = "${options.clusterPassword}"` : ''}`;
}

function configToml(options: EdgeOptions, rwPort: number, roPort: number): string {
  return `${commonToml({ topology: `${options.topology ?? ''}\n${options.extra ?? ''}` })}
[mysql]
enabled = false
[postgres]
enabled = false
[redis]
enabled = true
mode = "${options.mode}"
read_write_listen = "127.0.0.1:${rwPort}"
read_only_listen = "127.0.0.1:${roPort}"
${options.redis ?? ''}
[redis.sharding]
${options.sharding ?? ''}
${clusterToml(options)}
${(options.backends ?? []).map(redisBackendToml).join('\n')}
`;
}

export async function startEdge(options: EdgeOptions): Promise<EdgeHarness> {
  const rwPort = await freePort();
  const roPort = await freePort();
  const test = await startTestRuntime({
    name: 'redis-edge',
    services: [topologyService, redisEdgeService],
    config: configToml(options, rwPort, roPort),
    forgetTopologyOf: 'redis',
    ...(options.until ? { until: options.until } : {}),
  });
  const clients: Redis[] = [];
  return {
    runtime: test.runtime,
    admin: test.admin,
    readyz: test.readyz,
    metrics: test.metrics,
    metric: test.metric,
    rwPort,
    roPort,
    client(opts = {}) {
      const { readOnly, ...rest } = opts;
      const client = new Redis({ host: '127.0.0.1', port: readOnly ? roPort : rwPort, lazyConnect: false, maxRetriesPerRequest: 0, enableOfflineQueue: true, ...rest });
      clients.push(client);
      return client;
    },
    topology: async () => (await (await fetch(`${test.admin}/topology/redis`)).json()) as TopologyReport,
    async stop() {
      for (const c of clients) c.disconnect();
      await test.stop();
    },
  };
}
