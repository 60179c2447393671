// Test harness: pg-edge beside the real topology service, both in one runtime in this process on
// the embedded bus, against real PostgreSQL servers. Health checks run every 0.3 s, so readiness
// comes quickly and a stopped server, paused WAL replay or blue/green action reaches the edge soon.
import {
  backendsView,
  backendToml,
  commonToml,
  startTestRuntime,
  type BackendSpec,
  type BackendsView,
  type TestRuntime,
  type TopologyBackendView,
} from '@dbproxy/runtime/testing';
import { freePort, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { pgEdgeService } from '../src';

export { HEALTH_INTERVAL_SECONDS, type BackendSpec, type BgdActionBody } from '@dbproxy/runtime/testing';

/** One backend of GET /postgres/backends. */
export interface BackendReport extends TopologyBackendView {
  readonly transparent_sessions: number;
  readonly transaction_pool: Record<string, number> | null;
}

export interface BackendsReport {
  readonly routing_mode: string;
  readonly backends: BackendReport[];
  readonly processes: { pid: number; sessions: number }[];
}

export interface EdgeOptions {
  /**
   * What to wait for before returning: `ready` (default) is GET /readyz 200; `checked` is the
   * topology's first snapshot in the edge's view, for a test whose shard primary is meant to be down.
   */
  readonly until?: 'ready' | 'checked';
  /** More `[proxy]` lines (timeouts, TLS tables go in `extraToml`). */
  readonly proxy?: string;
}

/** The runtime's admin reads and blue/green actions, and GET /postgres/backends (topology's view in the edge). */
export interface EdgeHarness extends TestRuntime, BackendsView<BackendReport, BackendsReport> {
  readonly rwPort: number;
  readonly roPort: number;
}

function configToml(backends: readonly BackendSpec[], postgresToml: string, extraToml: string, rwPort: number, roPort: number, proxyToml = ''): string {
  const entries = backends.map((b) => backendToml('postgres_backends', { ...b, address: `${b.host}:${b.port}` }));
  const proxy = proxyToml.includes('shutdown_timeout_seconds') ? proxyToml : `shutdown_timeout_seconds = 3\n${proxyToml}`;
  return `${commonToml({ proxy, topology: extraToml })}
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

const backendsOf = (admin: string) => backendsView<BackendReport, BackendsReport>(`${admin}/postgres/backends`);

/** Every backend checked once: the topology's first snapshot is in the edge's view. */
const checked = { label: 'checked', arrived: async (admin: string) => (await backendsOf(admin).backends()).backends.every((b) => b.healthy !== null) };

export async function startEdge(backends: readonly BackendSpec[], postgresToml: string, extraToml = '', options: EdgeOptions = {}): Promise<EdgeHarness> {
  const rwPort = await freePort();
  const roPort = await freePort();
  const test = await startTestRuntime({
    name: 'pg-edge',
    services: [topologyService, pgEdgeService],
    config: configToml(backends, postgresToml, extraToml, rwPort, roPort, options.proxy),
    forgetTopologyOf: 'postgres',
    ...(options.until === 'checked' ? { until: checked } : {}),
  });
  return { ...test, ...backendsOf(test.admin), rwPort, roPort };
}

/** The primary and first replica of `pg` as backends, each with `extra` (e.g. the pool's credentials). */
export function primaryAndReplica(pg: ReplicatedServers<PostgresServer>, extra: string): BackendSpec[] {
  return [
    { name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra },
    { name: 'replica', host: pg.replicas[0].host, port: pg.replicas[0].port, role: 'replica', extra },
  ];
}
