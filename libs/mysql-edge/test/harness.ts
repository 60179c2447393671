// Test harness: mysql-edge beside the real topology service, both in one runtime in this process on
// the embedded bus, against real MariaDB servers. Health checks run every 0.3 s, so readiness comes
// quickly and a stopped server, stopped replication or blue/green action reaches the edge soon.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishMessage, Subjects, type BgdAction } from '@dbproxy/bus';
import { InvalidConfigFile, startRuntime, type Runtime } from '@dbproxy/runtime';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { createConnection, type Connection, type ConnectionOptions } from 'mysql2/promise';
import { mysqlEdgeService } from '../src';

export const HEALTH_INTERVAL_SECONDS = 0.3;

export interface BackendSpec {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  /** Extra TOML lines inside this [[mysql_backends]] entry. */
  readonly extra?: string;
}

/** One backend of GET /mysql/backends: topology's view in the edge, with pool figures. */
export interface BackendReport {
  readonly name: string;
  readonly role: string;
  readonly healthy: boolean | null;
  readonly lagging: boolean | null;
  readonly shunned: boolean | null;
  readonly draining: boolean | null;
  readonly pool: Record<string, number> | null;
  readonly [key: string]: unknown;
}

export interface BackendsReport {
  readonly generation: number;
  readonly processes: { pid: number; sessions: number; statements: number }[];
  readonly backends: BackendReport[];
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A blue/green action without its envelope (deployment, id, time, reason). */
export type BgdActionBody = DistributiveOmit<BgdAction, 'deployment' | 'actionId' | 'issuedAt' | 'reason'>;

export interface EdgeHarness {
  readonly runtime: Runtime;
  readonly rwPort: number;
  readonly roPort: number;
  readonly admin: string;
  readonly dir: TempDir;
  connect(options?: Partial<ConnectionOptions> & { port?: number }): Promise<Connection>;
  metrics(): Promise<string>;
  /** The value of one sample of /metrics (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  backends(): Promise<BackendsReport>;
  backend(name: string): Promise<BackendReport>;
  /** Waits until GET /mysql/backends shows `name` as `predicate` wants (topology's view in the edge). */
  waitForBackend(name: string, predicate: (b: BackendReport) => boolean, description: string, timeoutMs?: number): Promise<void>;
  /** Publishes a blue/green action on the bus, as bgd-monitor would; the topology service applies it. */
  bgdAction(action: BgdActionBody): void;
  readyz(): Promise<{ status: number; body: { status: string; reasons: string[] } }>;
  stop(): Promise<void>;
}

export const APP_USER = { user: 'app', password: 'app-secret' } as const;

export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

interface ConfigParts {
  readonly backends: readonly BackendSpec[];
  readonly mysqlToml: string;
  readonly extraToml: string;
  readonly telemetryToml: string;
  readonly rwPort: number;
  readonly roPort: number;
}

function configToml({ backends, mysqlToml, extraToml, telemetryToml, rwPort, roPort }: ConfigParts): string {
  const entries = backends.map(
    (b) => `
[[mysql_backends]]
name = "${b.name}"
address = "${b.host}:${b.port}"
role = "${b.role}"
shard = "${b.shard ?? 'default'}"
${b.extra ?? ''}`,
  );
  return `
[bus]
connect_timeout_seconds = 1
[telemetry]
log_level = "warn"
${telemetryToml}
[proxy.admin]
listen = "127.0.0.1:0"
[health]
interval_seconds = ${HEALTH_INTERVAL_SECONDS}
timeout_seconds = 1
failures_before_down = 2
successes_before_up = 1
[topology]
refresh_debounce_ms = 50
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
${entries.join('\n')}
`;
}

async function startBoth(configPath: string): Promise<Runtime> {
  return startRuntime({ services: [topologyService, mysqlEdgeService], configPath, version: 'test', adminListen: '127.0.0.1:0' }).catch((err: unknown) => {
    const issues = err instanceof InvalidConfigFile ? err.issues.map((i) => `${i.path}: ${i.message}`).join('; ') : '';
    throw new Error(`${String(err)} ${issues}`);
  });
}

/**
 * Starts topology + mysql-edge and returns once GET /readyz is 200 (topology has checked every
 * backend and the edge holds its snapshot). `mysqlToml` goes into [mysql], `extraToml` after
 * [topology], `telemetryToml` into [telemetry].
 */
export async function startEdge(backends: readonly BackendSpec[], mysqlToml = '', extraToml = '', telemetryToml = ''): Promise<EdgeHarness> {
  const dir = await tmpDir('mysql-edge');
  const rwPort = await freePort();
  const roPort = await freePort();
  const configPath = join(dir.path, 'dbproxy.toml');
  writeFileSync(configPath, configToml({ backends, mysqlToml, extraToml, telemetryToml, rwPort, roPort }));
  const runtime = await startBoth(configPath);
  const admin = `http://${runtime.adminAddress}`;
  const metrics = async () => (await fetch(`${admin}/metrics`)).text();
  let actions = 0;
  let stopped: Promise<void> | undefined;
  const edge: EdgeHarness = {
    runtime,
    rwPort,
    roPort,
    admin,
    dir,
    connect: (options = {}) => createConnection({ host: '127.0.0.1', port: rwPort, ...APP_USER, ...options }),
    metrics,
    metric: async (name, labels) => metricValue(await metrics(), name, labels),
    backends: async () => (await (await fetch(`${admin}/mysql/backends`)).json()) as BackendsReport,
    async backend(name) {
      const found = (await edge.backends()).backends.find((b) => b.name === name);
      if (!found) throw new Error(`no backend ${name} in GET /mysql/backends`);
      return found;
    },
    async waitForBackend(name, predicate, description, timeoutMs = 10_000) {
      await waitFor(async () => predicate(await edge.backend(name)), { timeoutMs, intervalMs: 50, description }).catch(async (err: unknown) => {
        throw new Error(`${String(err)}; last seen: ${JSON.stringify(await edge.backend(name))}`);
      });
    },
    bgdAction(action) {
      const envelope = { deployment: 'mysql-edge-test', actionId: `test-${++actions}-${Date.now()}`, issuedAt: new Date().toISOString(), reason: 'mysql-edge integration test' };
      publishMessage(runtime.bus, Subjects.bgdActions, {}, { ...envelope, ...action } as BgdAction);
    },
    async readyz() {
      const res = await fetch(`${admin}/readyz`);
      return { status: res.status, body: (await res.json()) as { status: string; reasons: string[] } };
    },
    stop: () => (stopped ??= runtime.stop('test done').then(() => dir.remove())),
  };
  await waitFor(async () => (await fetch(`${admin}/readyz`)).status === 200, { timeoutMs: 20_000, intervalMs: 50, description: 'mysql-edge ready beside topology' }).catch(async (err: unknown) => {
    const body = JSON.stringify((await edge.readyz()).body);
    await edge.stop();
    throw new Error(`${String(err)}: ${body}`);
  });
  return edge;
}
