// Test harness: pg-edge in this process on the embedded bus, against real PostgreSQL servers, with
// the topology snapshot the topology service would publish (all backends healthy unless told otherwise).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBus, KvRecords, openRecords, publishMessage, Subjects } from '@dbproxy/bus';
import { startRuntime, type Runtime } from '@dbproxy/runtime';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { pgEdgeService } from '../src';

export interface BackendSpec {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  /** Extra TOML lines inside this [[postgres_backends]] entry. */
  readonly extra?: string;
}

export interface EdgeHarness {
  readonly runtime: Runtime;
  readonly rwPort: number;
  readonly roPort: number;
  readonly admin: string;
  readonly dir: TempDir;
  /** Publishes a snapshot; `health` overrides per backend name. */
  publishTopology(health?: Record<string, Partial<{ healthy: boolean; lagging: boolean; shunned: boolean; draining: boolean }>>): void;
  backends(): Promise<{ routing_mode: string; backends: Record<string, unknown>[] }>;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

let generation = 0;

/** The embedded bus is process-wide: an earlier edge's configuration epoch must not be followed by the next one. */
async function forgetEarlierEdges(): Promise<void> {
  const bus = createBus({ name: 'pg-edge-test' });
  await (await openRecords(bus, KvRecords.config)).delete({});
  await (await openRecords(bus, KvRecords.topology)).delete({ protocol: 'postgres' });
  await bus.close();
}

export async function startEdge(backends: readonly BackendSpec[], postgresToml: string, extraToml = ''): Promise<EdgeHarness> {
  const dir = await tmpDir('pg-edge');
  const rwPort = await freePort();
  const roPort = await freePort();
  const toml = `
[bus]
connect_timeout_seconds = 1
[telemetry]
log_level = "warn"
[proxy]
shutdown_timeout_seconds = 3
[proxy.admin]
listen = "127.0.0.1:0"
${extraToml}
[postgres]
enabled = true
read_write_listen = "127.0.0.1:${rwPort}"
read_only_listen = "127.0.0.1:${roPort}"
${postgresToml}
[mysql]
enabled = false
[redis]
enabled = false
${backends
  .map(
    (b) => `
[[postgres_backends]]
name = "${b.name}"
address = "${b.host}:${b.port}"
role = "${b.role}"
shard = "${b.shard ?? 'default'}"
${b.extra ?? ''}`,
  )
  .join('\n')}
`;
  const configPath = join(dir.path, 'dbproxy.toml');
  writeFileSync(configPath, toml);
  await forgetEarlierEdges();
  const runtime = await startRuntime({ services: [pgEdgeService], configPath, version: 'test', adminListen: '127.0.0.1:0' });
  const admin = `http://${runtime.adminAddress}`;
  const publishTopology: EdgeHarness['publishTopology'] = (health = {}) => {
    const shards = [...new Set(backends.map((b) => b.shard ?? 'default'))];
    publishMessage(runtime.bus, Subjects.topology, { protocol: 'postgres' }, {
      protocol: 'postgres',
      generation: ++generation + Date.now(),
      epoch: runtime.config.current().epoch,
      publishedAt: new Date().toISOString(),
      shards: shards.map((shard) => ({
        shard,
        backends: backends
          .filter((b) => (b.shard ?? 'default') === shard)
          .map((b) => ({ name: b.name, address: `${b.host}:${b.port}`, role: b.role, weight: 1, healthy: true, lagging: false, shunned: false, draining: false, dnsPin: null, ...health[b.name] })),
      })),
    });
  };
  publishTopology();
  await waitFor(async () => (await fetch(`${admin}/readyz`)).status === 200, { timeoutMs: 10_000, description: 'pg-edge ready' });
  return {
    runtime,
    rwPort,
    roPort,
    admin,
    dir,
    publishTopology,
    backends: async () => (await (await fetch(`${admin}/postgres/backends`)).json()) as { routing_mode: string; backends: Record<string, unknown>[] },
    metrics: async () => (await fetch(`${admin}/metrics`)).text(),
    async stop() {
      await runtime.stop('test done');
      await dir.remove();
    },
  };
}
