// Test harness: mysql-edge in this process on the embedded bus, against real MariaDB servers, with
// the topology snapshot the topology service would publish (all backends healthy unless told otherwise).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishMessage, Subjects } from '@dbproxy/bus';
import { startRuntime, type Runtime } from '@dbproxy/runtime';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { createConnection, type Connection, type ConnectionOptions } from 'mysql2/promise';
import { mysqlEdgeService } from '../src';

export interface BackendSpec {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  /** Extra TOML lines inside this [[mysql_backends]] entry. */
  readonly extra?: string;
}

export type Health = Record<string, Partial<{ healthy: boolean; lagging: boolean; shunned: boolean; draining: boolean; dnsPin: string | null }>>;

export interface EdgeHarness {
  readonly runtime: Runtime;
  readonly rwPort: number;
  readonly roPort: number;
  readonly admin: string;
  readonly dir: TempDir;
  publishTopology(health?: Health): void;
  connect(options?: Partial<ConnectionOptions> & { port?: number }): Promise<Connection>;
  metrics(): Promise<string>;
  /** The value of one sample of /metrics (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  backends(): Promise<{ backends: { name: string; pool: Record<string, number> | null }[] }>;
  stop(): Promise<void>;
}

export const APP_USER = { user: 'app', password: 'app-secret' } as const;
let generation = 0;

export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** `mysqlToml` goes into [mysql], `extraToml` after [proxy.admin], `telemetryToml` into [telemetry]. */
export async function startEdge(backends: readonly BackendSpec[], mysqlToml = '', extraToml = '', telemetryToml = ''): Promise<EdgeHarness> {
  const dir = await tmpDir('mysql-edge');
  const rwPort = await freePort();
  const roPort = await freePort();
  const toml = `
[bus]
connect_timeout_seconds = 1
[telemetry]
log_level = "warn"
${telemetryToml}
[proxy.admin]
listen = "127.0.0.1:0"
${extraToml}
[[users]]
name = "app"
password = "app-secret"
[[users]]
name = "native"
password = "native-secret"
mysql_auth_plugin = "mysql_native_password"
[mysql]
enabled = true
read_write_listen = "127.0.0.1:${rwPort}"
read_only_listen = "127.0.0.1:${roPort}"
${mysqlToml}
[postgres]
enabled = false
[redis]
enabled = false
${backends
  .map(
    (b) => `
[[mysql_backends]]
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
  const runtime = await startRuntime({ services: [mysqlEdgeService], configPath, version: 'test', adminListen: '127.0.0.1:0' });
  const admin = `http://${runtime.adminAddress}`;
  const publishTopology: EdgeHarness['publishTopology'] = (health = {}) => {
    const shards = [...new Set(backends.map((b) => b.shard ?? 'default'))];
    publishMessage(runtime.bus, Subjects.topology, { protocol: 'mysql' }, {
      protocol: 'mysql',
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
  await waitFor(async () => (await fetch(`${admin}/readyz`)).status === 200, { timeoutMs: 10_000, description: 'mysql-edge ready' });
  const metrics = async () => (await fetch(`${admin}/metrics`)).text();
  return {
    runtime,
    rwPort,
    roPort,
    admin,
    dir,
    publishTopology,
    connect: (options = {}) => createConnection({ host: '127.0.0.1', port: rwPort, ...APP_USER, ...options }),
    metrics,
    metric: async (name, labels) => metricValue(await metrics(), name, labels),
    backends: async () => (await (await fetch(`${admin}/mysql/backends`)).json()) as { backends: { name: string; pool: Record<string, number> | null }[] },
    stop: (() => {
      let stopped: Promise<void> | undefined;
      return () => (stopped ??= runtime.stop('test done').then(() => dir.remove()));
    })(),
  };
}
