// Test harness: mysql-edge beside the real topology service, both in one runtime in this process on
// the embedded bus, against real MariaDB servers. Health checks run every 0.3 s, so readiness comes
// quickly and a stopped server, stopped replication or blue/green action reaches the edge soon.
import { KvRecords, openRecords } from '@dbproxy/bus';
import { documentHash, type ServiceDefinition } from '@dbproxy/runtime';
import {
  backendsView,
  backendToml,
  commonToml,
  startTestRuntime,
  type BackendSpec,
  type BackendsView,
  type CommonTomlParts,
  type TestRuntime,
  type TopologyBackendView,
} from '@dbproxy/runtime/testing';
import { freePort, waitFor, type MariaDbServer, type ReplicatedServers } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { createConnection, type Connection, type ConnectionOptions } from 'mysql2/promise';
import { mysqlEdgeService } from '../src';

export { HEALTH_INTERVAL_SECONDS, metricValue, type BackendSpec, type BgdActionBody } from '@dbproxy/runtime/testing';

/** One backend of GET /mysql/backends: topology's view in the edge, with pool figures. */
export interface BackendReport extends TopologyBackendView {
  readonly pool: Record<string, number> | null;
}

export interface BackendsReport {
  readonly generation: number;
  readonly processes: { pid: number; sessions: number; statements: number }[];
  readonly backends: BackendReport[];
}

/** The runtime's admin reads and blue/green actions, and GET /mysql/backends (topology's view in the edge). */
export interface EdgeHarness extends TestRuntime, BackendsView<BackendReport, BackendsReport> {
  readonly rwPort: number;
  readonly roPort: number;
  /** The whole dbproxy.toml the runtime started with. */
  readonly config: string;
  connect(options?: Partial<ConnectionOptions> & { port?: number }): Promise<Connection>;
}

export const APP_USER = { user: 'app', password: 'app-secret' } as const;

interface ConfigParts {
  readonly backends: readonly BackendSpec[];
  readonly mysqlToml: string;
  readonly extraToml: string;
  readonly telemetryToml: string;
  readonly proxyToml: string | undefined;
  readonly rwPort: number;
  readonly roPort: number;
  readonly health?: CommonTomlParts['health'];
}

function configToml({ backends, mysqlToml, extraToml, telemetryToml, proxyToml, rwPort, roPort, health }: ConfigParts): string {
  const entries = backends.map((b) => backendToml('mysql_backends', { ...b, address: `${b.host}:${b.port}` }));
  return `${commonToml({ telemetry: telemetryToml, topology: extraToml, ...(proxyToml === undefined ? {} : { proxy: proxyToml }), ...(health ? { health } : {}) })}
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

/**
 * Starts topology + mysql-edge and returns once GET /readyz is 200 (topology has checked every
 * backend and the edge holds its snapshot). `mysqlToml` goes into [mysql], `extraToml` after
 * [topology], `telemetryToml` into [telemetry], `proxyToml` into [proxy].
 */
export async function startEdge(
  backends: readonly BackendSpec[],
  mysqlToml = '',
  extraToml = '',
  telemetryToml = '',
  proxyToml?: string,
  /** More services in the same runtime (e.g. the xa-coordinator); `forget`: a runtime ran in this process before. */
  more: { readonly services?: readonly ServiceDefinition[]; readonly forget?: boolean; readonly health?: CommonTomlParts['health'] } = {},
): Promise<EdgeHarness> {
  const rwPort = await freePort();
  const roPort = await freePort();
  const config = configToml({ backends, mysqlToml, extraToml, telemetryToml, proxyToml, rwPort, roPort, health: more.health });
  const test = await startTestRuntime({ name: 'mysql-edge', services: [topologyService, mysqlEdgeService, ...(more.services ?? [])], config, ...(more.forget ? { forgetTopologyOf: 'mysql' as const } : {}) });
  return {
    ...test,
    ...backendsView<BackendReport, BackendsReport>(`${test.admin}/mysql/backends`),
    rwPort,
    roPort,
    config,
    connect: (options = {}) => createConnection({ host: '127.0.0.1', port: rwPort, ...APP_USER, ...options }),
  };
}

/** Root connections straight to a primary and its first replica, for setup and for checks behind the edge's back. */
export interface DirectConnections {
  readonly primary: Connection;
  readonly replica: Connection;
}

/** Connects to both servers, runs `setup` on the primary and waits until the replica has it. */
export async function openDirect(db: ReplicatedServers<MariaDbServer>, setup: readonly string[]): Promise<DirectConnections> {
  const replica = db.replicas[0];
  if (!replica) throw new Error('openDirect needs a replica');
  const direct = {
    primary: await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' }),
    replica: await createConnection({ host: replica.host, port: replica.port, user: 'root' }),
  };
  for (const sql of setup) await direct.primary.query(sql);
  await db.waitForReplicaCatchUp();
  return direct;
}

export async function closeDirect(direct: DirectConnections | undefined): Promise<void> {
  await direct?.primary.end();
  await direct?.replica.end();
}

/**
 * Publishes a new configuration epoch with `[mysql] name = value` (as the config API would, through
 * the configuration KV) and waits until the edge runs it.
 */
export async function applyMysqlSetting(edge: EdgeHarness, name: string, value: unknown): Promise<void> {
  await applySetting(edge, 'mysql', name, value);
}

/** Publishes `[section] name = value` as a new configuration version and waits until the edge applied it. */
export async function applySetting(edge: EdgeHarness, section: string, name: string, value: unknown): Promise<void> {
  const store = await openRecords(edge.runtime.bus, KvRecords.config);
  const current = await store.get({});
  const document = structuredClone(current?.value?.config as Record<string, Record<string, unknown>>);
  (document[section] as Record<string, unknown>)[name] = value;
  await store.put({}, { config: document, hash: documentHash(document), author: 'test', appliedAt: new Date().toISOString(), comment: `${section}.${name}` }, { expectedRevision: current?.revision ?? 0 });
  await waitFor(() => ((edge.runtime.config.current().config as unknown as Record<string, Record<string, unknown>>)[section])[name] === value || null);
}
