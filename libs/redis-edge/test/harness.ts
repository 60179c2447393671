// Test harness: redis-edge beside the real topology service, both in one runtime in this process on
// the embedded bus, against real Redis servers (standalone shards or a Redis Cluster) started by
// @dbproxy/testing. Topology health-checks every backend every 0.3 s, reads a cluster's slot map
// from [redis.cluster] seeds and answers the edge's refresh requests (as after a MOVED).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { createBus, KvRecords, openRecords, type TopologySnapshot } from '@dbproxy/bus';
import { InvalidConfigFile, startRuntime, type Runtime } from '@dbproxy/runtime';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { redisEdgeService } from '../src';

export const HEALTH_INTERVAL_SECONDS = 0.3;

export interface BackendSpec {
  readonly name: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  readonly password?: string;
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
}

/** GET /topology/redis of the topology service running beside the edge. */
export interface TopologyReport {
  readonly snapshot: TopologySnapshot | null;
  readonly [key: string]: unknown;
}

export interface EdgeHarness {
  readonly runtime: Runtime;
  readonly rwPort: number;
  readonly roPort: number;
  readonly admin: string;
  client(options?: RedisOptions & { readOnly?: boolean }): Redis;
  /** The topology service's current view of the Redis backends. */
  topology(): Promise<TopologyReport>;
  readyz(): Promise<{ status: number; body: { status: string; reasons: string[] } }>;
  metrics(): Promise<string>;
  /** The value of one metric line (sum over label sets matching `labels`). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

function backendToml(b: BackendSpec): string {
  return `
[[redis_backends]]
name = "${b.name}"
address = "127.0.0.1:${b.port}"
role = "${b.role}"
shard = "${b.shard ?? 'default'}"
${b.password ? `password = "${b.password}"` : ''}`;
}

function clusterToml(options: EdgeOptions): string {
  if (!options.clusterSeeds) return '';
  const seeds = options.clusterSeeds.map((p) => `"127.0.0.1:${p}"`).join(', ');
  return `[redis.cluster]\nenabled = true\nseeds = [${seeds}]\n${options.clusterPassword ? `password = "${options.clusterPassword}"` : ''}`;
}

function configToml(options: EdgeOptions, rwPort: number, roPort: number): string {
  return `
[bus]
connect_timeout_seconds = 1
[telemetry]
log_level = "warn"
[proxy.admin]
listen = "127.0.0.1:0"
[health]
interval_seconds = ${HEALTH_INTERVAL_SECONDS}
timeout_seconds = 1
failures_before_down = 2
successes_before_up = 1
[topology]
refresh_debounce_ms = 50
${options.topology ?? ''}
${options.extra ?? ''}
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
${(options.backends ?? []).map(backendToml).join('\n')}
`;
}

/** The embedded bus is process-wide: an earlier runtime's configuration and topology must not be taken over. */
async function forgetEarlierRuntimes(): Promise<void> {
  const bus = createBus({ name: 'redis-edge-test' });
  await (await openRecords(bus, KvRecords.config)).delete({});
  await (await openRecords(bus, KvRecords.topology)).delete({ protocol: 'redis' });
  await bus.close();
}

function sumMetric(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

export async function startEdge(options: EdgeOptions): Promise<EdgeHarness> {
  const dir: TempDir = await tmpDir('redis-edge');
  const rwPort = await freePort();
  const roPort = await freePort();
  const configPath = join(dir.path, 'dbproxy.toml');
  writeFileSync(configPath, configToml(options, rwPort, roPort));
  await forgetEarlierRuntimes();
  const runtime = await startRuntime({ services: [topologyService, redisEdgeService], configPath, version: 'test', adminListen: '127.0.0.1:0' }).catch((err: unknown) => {
    const issues = err instanceof InvalidConfigFile ? err.issues.map((i) => `${i.path}: ${i.message}`).join('; ') : '';
    throw new Error(`${String(err)} ${issues}`);
  });
  const admin = `http://${runtime.adminAddress}`;
  const clients: Redis[] = [];
  const metrics = async (): Promise<string> => (await fetch(`${admin}/metrics`)).text();
  const edge: EdgeHarness = {
    runtime,
    rwPort,
    roPort,
    admin,
    client(opts = {}) {
      const { readOnly, ...rest } = opts;
      const client = new Redis({ host: '127.0.0.1', port: readOnly ? roPort : rwPort, lazyConnect: false, maxRetriesPerRequest: 0, enableOfflineQueue: true, ...rest });
      clients.push(client);
      return client;
    },
    topology: async () => (await (await fetch(`${admin}/topology/redis`)).json()) as TopologyReport,
    async readyz() {
      const res = await fetch(`${admin}/readyz`);
      return { status: res.status, body: (await res.json()) as { status: string; reasons: string[] } };
    },
    metrics,
    metric: async (name, labels = {}) => sumMetric(await metrics(), name, labels),
    async stop() {
      for (const c of clients) c.disconnect();
      await runtime.stop('test done');
      await dir.remove();
    },
  };
  await waitFor(async () => (await fetch(`${admin}/readyz`)).status === 200, { timeoutMs: 20_000, intervalMs: 50, description: 'redis-edge ready beside topology' }).catch(async (err: unknown) => {
    const body = JSON.stringify((await edge.readyz()).body);
    await edge.stop();
    throw new Error(`${String(err)}: ${body}`);
  });
  return edge;
}
