// Integration-test runtime: given services (an edge beside the topology service, say) in one runtime in
// this process on the embedded bus, with the configuration in a temp dir; plus the admin HTTP reads
// (readiness, metrics, topology's backend view) and the blue/green actions the edges' tests share.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBus, KvRecords, openRecords, publishMessage, Subjects, type BgdAction } from '@dbproxy/bus';
import { tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { InvalidConfigFile, startRuntime, type Runtime } from '../runtime';
import type { ServiceDefinition } from '../service';

/** Health checks every 0.3 s, so readiness comes quickly and a stopped server reaches the edge soon. */
export const HEALTH_INTERVAL_SECONDS = 0.3;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A blue/green action without its envelope (deployment, id, time, reason). */
export type BgdActionBody = DistributiveOmit<BgdAction, 'deployment' | 'actionId' | 'issuedAt' | 'reason'>;

export interface ReadyzAnswer {
  readonly status: number;
  readonly body: { status: string; reasons: string[] };
}

/** One backend entry of a test configuration. */
export interface BackendSpec {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  /** Extra TOML lines inside this backend's entry. */
  readonly extra?: string;
}

/** One backend of an edge's GET /<protocol>/backends: topology's view in the edge. */
export interface TopologyBackendView {
  readonly name: string;
  readonly role: string;
  readonly healthy: boolean | null;
  readonly lagging: boolean | null;
  readonly shunned: boolean | null;
  readonly draining: boolean | null;
  readonly [key: string]: unknown;
}

/** The sum of the /metrics samples of `name` whose labels include `labels` (0 when absent). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** A `[[<table>]]` backend entry at `address`. */
export function backendToml(table: string, b: Omit<BackendSpec, 'host' | 'port'> & { readonly address: string }): string {
  return `
[[${table}]]
name = "${b.name}"
address = "${b.address}"
role = "${b.role}"
shard = "${b.shard ?? 'default'}"
${b.extra ?? ''}`;
}

export interface CommonTomlParts {
  /** Lines inside [telemetry]. */
  readonly telemetry?: string;
  /** Lines of [proxy] (the table is left out when absent). */
  readonly proxy?: string;
  /** Lines after [topology] (its settings, or further tables). */
  readonly topology?: string;
  /** Health-check timeout and failures before down (default 1 s and 2: a test's backend goes down fast). */
  readonly health?: { readonly timeoutSeconds: number; readonly failuresBeforeDown: number };
}

/** The bus, telemetry, admin, health and topology tables every edge test configuration opens with. */
export function commonToml(parts: CommonTomlParts = {}): string {
  return `
[bus]
connect_timeout_seconds = 1
[telemetry]
log_level = "warn"
${parts.telemetry ?? ''}
${parts.proxy === undefined ? '' : `[proxy]\n${parts.proxy}`}
[proxy.admin]
listen = "127.0.0.1:0"
[health]
interval_seconds = ${HEALTH_INTERVAL_SECONDS}
timeout_seconds = ${parts.health?.timeoutSeconds ?? 1}
failures_before_down = ${parts.health?.failuresBeforeDown ?? 2}
successes_before_up = 1
[topology]
refresh_debounce_ms = 50
${parts.topology ?? ''}`;
}

export interface BackendsView<R extends TopologyBackendView, T extends { readonly backends: readonly R[] }> {
  backends(): Promise<T>;
  backend(name: string): Promise<R>;
  /** Waits until the view shows `name` as `predicate` wants. */
  waitForBackend(name: string, predicate: (b: R) => boolean, description: string, timeoutMs?: number): Promise<void>;
}

/** Reads an edge's GET /<protocol>/backends at `url`. */
export function backendsView<R extends TopologyBackendView, T extends { readonly backends: readonly R[] }>(url: string): BackendsView<R, T> {
  const view: BackendsView<R, T> = {
    backends: async () => (await (await fetch(url)).json()) as T,
    async backend(name) {
      const found = (await view.backends()).backends.find((b) => b.name === name);
      if (!found) throw new Error(`no backend ${name} in GET ${new URL(url).pathname}`);
      return found;
    },
    async waitForBackend(name, predicate, description, timeoutMs = 10_000) {
      await waitFor(async () => predicate(await view.backend(name)), { timeoutMs, intervalMs: 50, description }).catch(async (err: unknown) => {
        throw new Error(`${String(err)}; last seen: ${JSON.stringify(await view.backend(name))}`);
      });
    },
  };
  return view;
}

export interface TestRuntimeOptions {
  /** Names the temp dir, the blue/green deployment and the readiness wait (e.g. `pg-edge`). */
  readonly name: string;
  readonly services: readonly ServiceDefinition[];
  /** The whole dbproxy.toml. */
  readonly config: string;
  /**
   * The embedded bus is process-wide: delete the configuration record and this protocol's topology
   * record an earlier runtime left, so that they are not taken over.
   */
  readonly forgetTopologyOf?: 'mysql' | 'postgres' | 'redis';
  /** What to wait for before returning (default: GET /readyz answers 200). */
  readonly until?: { readonly label: string; readonly arrived: (admin: string) => Promise<boolean> };
}

export interface TestRuntime {
  readonly runtime: Runtime;
  /** http://host:port of the admin server. */
  readonly admin: string;
  readonly dir: TempDir;
  metrics(): Promise<string>;
  /** The sum of the samples of `name` matching `labels` (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  readyz(): Promise<ReadyzAnswer>;
  /** Publishes a blue/green action on the bus, as bgd-monitor would; the topology service applies it. */
  bgdAction(action: BgdActionBody): void;
  /** Stops the runtime and removes the temp dir (once, however often called). */
  stop(): Promise<void>;
}

async function forgetEarlierRuntimes(name: string, protocol: 'mysql' | 'postgres' | 'redis'): Promise<void> {
  const bus = createBus({ name: `${name}-test` });
  await (await openRecords(bus, KvRecords.config)).delete({});
  await (await openRecords(bus, KvRecords.topology)).delete({ protocol });
  await bus.close();
}

async function startWithIssues(services: readonly ServiceDefinition[], configPath: string): Promise<Runtime> {
  return startRuntime({ services, configPath, version: 'test', adminListen: '127.0.0.1:0' }).catch((err: unknown) => {
    const issues = err instanceof InvalidConfigFile ? err.issues.map((i) => `${i.path}: ${i.message}`).join('; ') : '';
    throw new Error(`${String(err)} ${issues}`);
  });
}

function adminReads(runtime: Runtime, dir: TempDir, name: string): TestRuntime {
  const admin = `http://${runtime.adminAddress}`;
  const metrics = async (): Promise<string> => (await fetch(`${admin}/metrics`)).text();
  let actions = 0;
  let stopped: Promise<void> | undefined;
  return {
    runtime,
    admin,
    dir,
    metrics,
    metric: async (metricName, labels) => metricValue(await metrics(), metricName, labels),
    async readyz() {
      const res = await fetch(`${admin}/readyz`);
      return { status: res.status, body: (await res.json()) as ReadyzAnswer['body'] };
    },
    bgdAction(action) {
      const envelope = { deployment: `${name}-test`, actionId: `test-${++actions}-${Date.now()}`, issuedAt: new Date().toISOString(), reason: `${name} integration test` };
      publishMessage(runtime.bus, Subjects.bgdActions, {}, { ...envelope, ...action } as BgdAction);
    },
    stop: () => (stopped ??= runtime.stop('test done').then(() => dir.remove())),
  };
}

/** Writes the configuration, starts the services and returns once `until` holds (stopping them if it never does). */
export async function startTestRuntime(opts: TestRuntimeOptions): Promise<TestRuntime> {
  const dir = await tmpDir(opts.name);
  const configPath = join(dir.path, 'dbproxy.toml');
  writeFileSync(configPath, opts.config);
  if (opts.forgetTopologyOf) await forgetEarlierRuntimes(opts.name, opts.forgetTopologyOf);
  const test = adminReads(await startWithIssues(opts.services, configPath), dir, opts.name);
  const until = opts.until ?? { label: 'ready', arrived: async (admin: string) => (await fetch(`${admin}/readyz`)).status === 200 };
  await waitFor(() => until.arrived(test.admin), { timeoutMs: 20_000, intervalMs: 50, description: `${opts.name} ${until.label} beside topology` }).catch(async (err: unknown) => {
    const body = JSON.stringify((await test.readyz()).body);
    await test.stop();
    throw new Error(`${String(err)}: ${body}`);
  });
  return test;
}
