// Test support: `./bin/dbproxy start topology` as a child process on a real nats-server, an
// edge-side TopologyClient in this (separate) process behind a real runtime with /readyz, and
// readers of the service's admin HTTP (/metrics, /topology).
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import type { Protocol } from '@dbproxy/bus';
import { startRuntime, type Runtime, type ServiceDefinition } from '@dbproxy/runtime';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, waitFor } from '@dbproxy/testing';
import { TopologyClient, type BackendState } from '@dbproxy/topology-client';

/** Health settings of every test: short intervals, so three intervals are 3 s. */
export const INTERVAL_SECONDS = 1;

export function baseToml(natsUrl: string, adminPort: number): string {
  return `
[bus]
nats_url = "${natsUrl}"
connect_timeout_seconds = 2
[telemetry]
log_level = "warn"
[proxy.admin]
topology = "127.0.0.1:${adminPort}"
[health]
interval_seconds = ${INTERVAL_SECONDS}
timeout_seconds = 0.8
failures_before_down = 2
successes_before_up = 1
[topology]
republish_interval_seconds = 1
redis_slot_refresh_seconds = 30
refresh_debounce_ms = 50
`;
}

export interface TopologyProcess {
  readonly proc: DbproxyProcess;
  readonly admin: string;
  restart(): Promise<TopologyProcess>;
}

/** Starts the topology service as its own process and waits until its first checks ran. */
export async function startTopology(configPath: string, adminPort: number): Promise<TopologyProcess> {
  const proc = startDbproxy(['start', 'topology', '--config', configPath]);
  const admin = `http://127.0.0.1:${adminPort}`;
  await waitForHttp(`${admin}/readyz`, 200, 30_000).catch((err) => {
    throw new Error(`topology did not become ready: ${String(err)}\n${proc.output()}`);
  });
  return { proc, admin, restart: () => startTopology(configPath, adminPort) };
}

const EDGE_SERVICE: Record<Protocol, Pick<ServiceDefinition, 'name' | 'adminKey'>> = {
  mysql: { name: 'mysql-edge', adminKey: 'mysql_edge' },
  postgres: { name: 'pg-edge', adminKey: 'pg_edge' },
  redis: { name: 'redis-edge', adminKey: 'redis_edge' },
};

export interface EdgeProbe {
  readonly client: TopologyClient;
  readonly runtime: Runtime;
  /** GET /readyz of the edge process: status code and body. */
  readyz(): Promise<{ status: number; body: { status: string; reasons: string[] } }>;
  stop(): Promise<void>;
}

/** What an edge does with topology: one client per protocol, its readiness on the edge's /readyz. */
export async function startEdgeProbe(configPath: string, protocol: Protocol): Promise<EdgeProbe> {
  let client: TopologyClient | undefined;
  const definition: ServiceDefinition = {
    ...EDGE_SERVICE[protocol],
    async start(ctx) {
      client = new TopologyClient({ bus: ctx.bus, protocol, config: ctx.config, instanceId: ctx.instanceId, readiness: ctx.readiness });
      await client.start();
      const running = client;
      return { close: async () => running.stop() };
    },
  };
  const quiet = new Writable({ write: (_chunk, _enc, done) => done() });
  const runtime = await startRuntime({ services: [definition], configPath, version: 'test', adminListen: '127.0.0.1:0', logDestination: quiet });
  const url = `http://${runtime.adminAddress}/readyz`;
  return {
    client: client as TopologyClient,
    runtime,
    async readyz() {
      const res = await fetch(url);
      return { status: res.status, body: (await res.json()) as { status: string; reasons: string[] } };
    },
    stop: () => runtime.stop('test done'),
  };
}

/** Waits until the client's view of `name` satisfies `predicate`; returns how long that took. */
export async function waitForBackend(client: TopologyClient, name: string, predicate: (b: BackendState) => boolean, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  await waitFor(() => {
    const b = client.backend(name);
    return b !== undefined && predicate(b);
  }, { timeoutMs, intervalMs: 20, description: `backend ${name} to reach the expected state (now ${JSON.stringify(client.backend(name))})` });
  return Date.now() - started;
}

/** One backend in `GET /topology[/:protocol]`: where it is placed and its health-check state. */
export interface BackendDescription {
  name: string;
  shard: string;
  role: 'primary' | 'replica';
  address: string;
  connect_address: string;
  state: 'unchecked' | 'up' | 'down';
  checks: number;
  consecutive_failures: number;
  max_lag_seconds: number;
  lag: { lag_seconds: number | null; lagging: boolean; reason?: string } | null;
  last_check: { ok: boolean; latency_ms: number | null; role_observed: string; position: string | null; checked_at: string; error?: string } | null;
}

/** `GET /topology/:protocol` (and each entry of `GET /topology`'s `protocols`). */
export interface ProtocolDescription {
  protocol: Protocol;
  /** The published snapshot, keys in snake_case like every admin JSON key. */
  snapshot: {
    protocol: Protocol;
    generation: number;
    epoch: number;
    published_at: string;
    shards: { shard: string; backends: { name: string; address: string; role: string; healthy: boolean; lagging: boolean; shunned: boolean; draining: boolean; dns_pin: string | null }[] }[];
  } | null;
  overlay: Record<string, unknown>;
  cluster: unknown;
  backends: BackendDescription[];
}

/** One scrape of a Prometheus text exposition (`GET /metrics`). */
export interface MetricsScrape {
  readonly text: string;
  /** The sample of `name` whose labels include `labels`; undefined when there is none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of `name`, with its labels. */
  samples(name: string): { labels: Record<string, string>; value: number }[];
  /** The `# TYPE` of a metric family. */
  type(name: string): string | undefined;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): MetricsScrape {
  const series: { name: string; labels: Record<string, string>; value: number }[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1] as string, type[2] as string);
    const sample = line.startsWith('#') ? null : SAMPLE.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(LABEL)].map((m) => [m[1] as string, m[2] as string]));
    series.push({ name: sample[1] as string, labels, value: Number(sample[3]) });
  }
  const samples = (name: string) => series.filter((s) => s.name === name).map(({ labels, value }) => ({ labels, value }));
  return {
    text,
    samples,
    value: (name, labels = {}) => samples(name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value,
    type: (name) => types.get(name),
  };
}

/** GET `${admin}/metrics`, parsed. */
export async function scrapeMetrics(admin: string): Promise<MetricsScrape> {
  const res = await fetch(`${admin}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}

/** GET `url`: status and parsed JSON body. */
export async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

/** One command on its own short-lived connection to a Redis server or cluster node; its raw reply. */
export async function redisCommand(server: { host: string; port: number }, ...args: string[]): Promise<unknown> {
  const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
  await client.connect();
  try {
    return await client.call(args[0] as string, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

export { freePort, writeConfig };
