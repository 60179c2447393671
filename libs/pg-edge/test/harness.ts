// Test harness: pg-edge beside the real topology service, both in one runtime in this process on
// the embedded bus, against real PostgreSQL servers. Health checks run every 0.3 s, so readiness
// comes quickly and a stopped server, paused WAL replay or blue/green action reaches the edge soon.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBus, KvRecords, openRecords, publishMessage, Subjects, type BgdAction } from '@dbproxy/bus';
import { InvalidConfigFile, startRuntime, type Runtime } from '@dbproxy/runtime';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { pgEdgeService } from '../src';

export const HEALTH_INTERVAL_SECONDS = 0.3;

export interface BackendSpec {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  /** Extra TOML lines inside this [[postgres_backends]] entry. */
  readonly extra?: string;
}

/** One backend of GET /postgres/backends. */
export interface BackendReport {
  readonly name: string;
  readonly role: string;
  readonly healthy: boolean | null;
  readonly lagging: boolean | null;
  readonly shunned: boolean | null;
  readonly draining: boolean | null;
  readonly transparent_sessions: number;
  readonly transaction_pool: Record<string, number> | null;
  readonly [key: string]: unknown;
}

export interface BackendsReport {
  readonly routing_mode: string;
  readonly backends: BackendReport[];
  readonly processes: { pid: number; sessions: number }[];
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A blue/green action without its envelope (deployment, id, time, reason). */
export type BgdActionBody = DistributiveOmit<BgdAction, 'deployment' | 'actionId' | 'issuedAt' | 'reason'>;

export interface EdgeOptions {
  /**
   * What to wait for before returning: `ready` (default) is GET /readyz 200; `checked` is the
   * topology's first snapshot in the edge's view, for a test whose shard primary is meant to be down.
   */
  readonly until?: 'ready' | 'checked';
}

export interface EdgeHarness {
  readonly runtime: Runtime;
  readonly rwPort: number;
  readonly roPort: number;
  readonly admin: string;
  readonly dir: TempDir;
  backends(): Promise<BackendsReport>;
  backend(name: string): Promise<BackendReport>;
  /** Waits until GET /postgres/backends shows `name` as `predicate` wants (topology's view in the edge). */
  waitForBackend(name: string, predicate: (b: BackendReport) => boolean, description: string, timeoutMs?: number): Promise<void>;
  /** Publishes a blue/green action on the bus, as bgd-monitor would; the topology service applies it. */
  bgdAction(action: BgdActionBody): void;
  readyz(): Promise<{ status: number; body: { status: string; reasons: string[] } }>;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** The embedded bus is process-wide: an earlier runtime's configuration and topology must not be taken over. */
async function forgetEarlierRuntimes(): Promise<void> {
  const bus = createBus({ name: 'pg-edge-test' });
  await (await openRecords(bus, KvRecords.config)).delete({});
  await (await openRecords(bus, KvRecords.topology)).delete({ protocol: 'postgres' });
  await bus.close();
}

function configToml(backends: readonly BackendSpec[], postgresToml: string, extraToml: string, rwPort: number, roPort: number): string {
  const entries = backends.map(
    (b) => `
[[postgres_backends]]
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
[proxy]
shutdown_timeout_seconds = 3
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
[postgres]
enabled = true
read_write_listen = "127.0.0.1:${rwPort}"
read_only_listen = "127.0.0.1:${roPort}"
${postgresToml}
[mysql]
enabled = false
[redis]
enabled = false
${entries.join('\n')}
`;
}

export async function startEdge(backends: readonly BackendSpec[], postgresToml: string, extraToml = '', options: EdgeOptions = {}): Promise<EdgeHarness> {
  const dir = await tmpDir('pg-edge');
  const rwPort = await freePort();
  const roPort = await freePort();
  const configPath = join(dir.path, 'dbproxy.toml');
  writeFileSync(configPath, configToml(backends, postgresToml, extraToml, rwPort, roPort));
  await forgetEarlierRuntimes();
  const runtime = await startRuntime({ services: [topologyService, pgEdgeService], configPath, version: 'test', adminListen: '127.0.0.1:0' }).catch((err: unknown) => {
    const issues = err instanceof InvalidConfigFile ? err.issues.map((i) => `${i.path}: ${i.message}`).join('; ') : '';
    throw new Error(`${String(err)} ${issues}`);
  });
  const admin = `http://${runtime.adminAddress}`;
  let actions = 0;
  const edge: EdgeHarness = {
    runtime,
    rwPort,
    roPort,
    admin,
    dir,
    backends: async () => (await (await fetch(`${admin}/postgres/backends`)).json()) as BackendsReport,
    async backend(name) {
      const found = (await edge.backends()).backends.find((b) => b.name === name);
      if (!found) throw new Error(`no backend ${name} in GET /postgres/backends`);
      return found;
    },
    async waitForBackend(name, predicate, description, timeoutMs = 10_000) {
      await waitFor(async () => predicate(await edge.backend(name)), { timeoutMs, intervalMs: 50, description }).catch(async (err: unknown) => {
        throw new Error(`${String(err)}; last seen: ${JSON.stringify(await edge.backend(name))}`);
      });
    },
    bgdAction(action) {
      const envelope = { deployment: 'pg-edge-test', actionId: `test-${++actions}-${Date.now()}`, issuedAt: new Date().toISOString(), reason: 'pg-edge integration test' };
      publishMessage(runtime.bus, Subjects.bgdActions, {}, { ...envelope, ...action } as BgdAction);
    },
    async readyz() {
      const res = await fetch(`${admin}/readyz`);
      return { status: res.status, body: (await res.json()) as { status: string; reasons: string[] } };
    },
    metrics: async () => (await fetch(`${admin}/metrics`)).text(),
    async stop() {
      await runtime.stop('test done');
      await dir.remove();
    },
  };
  const arrived =
    options.until === 'checked'
      ? async () => (await edge.backends()).backends.every((b) => b.healthy !== null)
      : async () => (await fetch(`${admin}/readyz`)).status === 200;
  await waitFor(arrived, { timeoutMs: 20_000, intervalMs: 50, description: `pg-edge ${options.until ?? 'ready'} beside topology` }).catch(async (err: unknown) => {
    const body = JSON.stringify((await edge.readyz()).body);
    await edge.stop();
    throw new Error(`${String(err)}: ${body}`);
  });
  return edge;
}
