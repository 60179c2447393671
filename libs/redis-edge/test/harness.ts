// Test harness: redis-edge in this process on the embedded bus, against real Redis servers
// (standalone shards or a Redis Cluster) started by @dbproxy/testing, with the topology snapshots
// the topology service would publish (all backends healthy; cluster slots read from the cluster,
// again on every refresh request the edge makes after a MOVED).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { InvalidConfigFile, startRuntime, type Runtime } from '@dbproxy/runtime';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { TestTopology } from './test-topology';
import { redisEdgeService } from '../src';

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
  /** Extra top-level TOML (e.g. [proxy] settings). */
  readonly extra?: string;
}

export interface EdgeHarness {
  readonly runtime: Runtime;
  readonly rwPort: number;
  readonly roPort: number;
  readonly admin: string;
  client(options?: RedisOptions & { readOnly?: boolean }): Redis;
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

export async function startEdge(options: EdgeOptions): Promise<EdgeHarness> {
  const dir: TempDir = await tmpDir('redis-edge');
  const rwPort = await freePort();
  const roPort = await freePort();
  const cluster = options.clusterSeeds
    ? `[redis.cluster]\nenabled = true\nseeds = [${options.clusterSeeds.map((p) => `"127.0.0.1:${p}"`).join(', ')}]\n${options.clusterPassword ? `password = "${options.clusterPassword}"` : ''}`
    : '';
  const toml = `
[bus]
connect_timeout_seconds = 1
[telemetry]
log_level = "warn"
[proxy.admin]
listen = "127.0.0.1:0"
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
${cluster}
${(options.backends ?? []).map(backendToml).join('\n')}
`;
  const configPath = join(dir.path, 'dbproxy.toml');
  writeFileSync(configPath, toml);
  const runtime = await startRuntime({ services: [redisEdgeService], configPath, version: 'test', adminListen: '127.0.0.1:0' }).catch((err: unknown) => {
    const issues = err instanceof InvalidConfigFile ? err.issues.map((i) => `${i.path}: ${i.message}`).join('; ') : '';
    throw new Error(`${String(err)} ${issues}`);
  });
  const admin = `http://${runtime.adminAddress}`;
  const topology = new TestTopology(runtime.bus, () => runtime.config.current().epoch, options.backends ?? [], options.clusterSeeds, options.clusterPassword);
  await topology.start();
  await waitFor(async () => (await fetch(`${admin}/readyz`)).status === 200, { timeoutMs: 20_000, description: 'redis-edge ready' }).catch(async (err: unknown) => {
    const body = await (await fetch(`${admin}/readyz`)).text();
    topology.stop();
    await runtime.stop('not ready');
    throw new Error(`${String(err)}: ${body}`);
  });
  const clients: Redis[] = [];
  const metrics = async (): Promise<string> => (await fetch(`${admin}/metrics`)).text();
  return {
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
    metrics,
    async metric(name, labels = {}) {
      let total = 0;
      for (const line of (await metrics()).split('\n')) {
        if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
        if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return total;
    },
    async stop() {
      for (const c of clients) c.disconnect();
      topology.stop();
      await runtime.stop('test done');
      await dir.remove();
    },
  };
}
