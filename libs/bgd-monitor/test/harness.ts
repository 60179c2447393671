// Scenario harness: one shared estate (NATS, two simulated RDS blue/green estates on real MariaDB
// servers) and, per scenario, topology + bgd-monitor in a runtime on real NATS with the phases and
// actions recorded from the bus, topology's view read from its admin HTTP.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { createBus, KvRecords, openRecords, subscribeMessages, Subjects, type BgdAction, type BgdPhase, type Bus } from '@dbproxy/bus';
import { parseToml } from '@dbproxy/config';
import { startRuntime, type Runtime, type ServiceDefinition } from '@dbproxy/runtime';
import { RdsBgdSimulation, startMariaDb, startNats, tmpDir, waitFor, type MariaDbServer, type NatsServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { bgdMonitorService } from '../src';

export const A = {
  blue: 'orders.c1abc.sim-1.rds.amazonaws.com',
  green: 'orders-green-x1y2z3.c1abc.sim-1.rds.amazonaws.com',
  blueReader: 'orders-r1.c1abc.sim-1.rds.amazonaws.com',
  greenReader: 'orders-r1-green-q9w8e7.c1abc.sim-1.rds.amazonaws.com',
  blueReader2: 'orders-r2.c1abc.sim-1.rds.amazonaws.com',
} as const;
export const B = {
  blue: 'billing.c2def.sim-1.rds.amazonaws.com',
  green: 'billing-green-a1b2c3.c2def.sim-1.rds.amazonaws.com',
} as const;

export interface Estate {
  readonly nats: NatsServer;
  readonly a: ReplicatedServers<MariaDbServer>;
  readonly b: ReplicatedServers<MariaDbServer>;
  readonly simA: RdsBgdSimulation;
  readonly simB: RdsBgdSimulation;
  /** Estate A's servers accept TLS with this self-signed certificate (`*.c1abc.sim-1.rds.amazonaws.com`); use it as `ca_path`. */
  readonly caPath: string;
  stop(): Promise<void>;
}

/** A self-signed certificate for every simulated RDS name of estate A (one wildcard label). */
async function estateCertificate(dir: TempDir): Promise<{ cert: string; key: string }> {
  const [cert, key] = [join(dir.path, 'cert.pem'), join(dir.path, 'key.pem')];
  const name = `*.${A.blue.slice(A.blue.indexOf('.') + 1)}`;
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`, '-days', '2']);
  return { cert, key };
}

/** NATS, estate A (blue writer, green writer replicating from blue, a blue reader; TLS offered) and estate B (blue, green). */
export async function startEstate(): Promise<Estate> {
  const certs = await tmpDir('bgd-certs');
  const { cert, key } = await estateCertificate(certs);
  const [nats, a, b] = await Promise.all([startNats(), startMariaDb({ replicas: 2, serverIdBase: 10, settings: { 'ssl-cert': cert, 'ssl-key': key } }), startMariaDb({ replicas: 1, serverIdBase: 20 })]);
  const [greenA, readerA] = a.replicas as [MariaDbServer, MariaDbServer];
  const simA = await RdsBgdSimulation.start({ [A.blue]: a.primary, [A.green]: greenA, [A.blueReader]: readerA, [A.greenReader]: greenA, [A.blueReader2]: readerA }, [a.primary, greenA]);
  const simB = await RdsBgdSimulation.start({ [B.blue]: b.primary, [B.green]: b.replicas[0] as MariaDbServer }, [b.primary, b.replicas[0] as MariaDbServer]);
  return {
    nats,
    a,
    b,
    simA,
    simB,
    caPath: cert,
    async stop() {
      await Promise.all([simA.stop(), simB.stop()]);
      await Promise.all([a.destroy(), b.destroy(), nats.destroy()]);
      await certs.remove();
    },
  };
}

export interface BackendLine {
  readonly name: string;
  readonly address: string;
  readonly role: 'primary' | 'replica';
  readonly shard?: string;
  /** Extra TOML lines in the entry (username, password, ...). */
  readonly extra?: string;
}

export interface DeploymentLines {
  readonly name: string;
  readonly blue_writer: string;
  readonly blue_readers?: readonly string[];
  readonly green_writer?: string;
  readonly green_readers?: readonly string[];
  readonly writer_is_also_reader?: boolean;
  readonly enabled?: boolean;
}

export function configToml(natsUrl: string, hosts: Record<string, string>, backends: readonly BackendLine[], deployments: readonly DeploymentLines[], extra = ''): string {
  const hostLines = Object.entries(hosts).map(([h, ip]) => `"${h}" = "${ip}"`).join(', ');
  const list = (xs: readonly string[] | undefined) => `[${(xs ?? []).map((x) => `"${x}"`).join(', ')}]`;
  return `
[bus]
nats_url = "${natsUrl}"
connect_timeout_seconds = 2
[telemetry]
log_level = "warn"
[proxy]
test_hosts = { ${hostLines} }
[proxy.admin]
listen = "127.0.0.1:0"
[health]
interval_seconds = 0.3
timeout_seconds = 1
failures_before_down = 2
successes_before_up = 1
[topology]
refresh_debounce_ms = 50
republish_interval_seconds = 1
${backends.map((b) => `[[mysql_backends]]\nname = "${b.name}"\naddress = "${b.address}"\nrole = "${b.role}"\nshard = "${b.shard ?? 'default'}"\n${b.extra ?? ''}\n`).join('\n')}
${deployments
  .map(
    (d) => `[[bgd_deployments]]
name = "${d.name}"
enabled = ${d.enabled ?? true}
blue_writer = "${d.blue_writer}"
blue_readers = ${list(d.blue_readers)}
${d.green_writer ? `green_writer = "${d.green_writer}"` : ''}
green_readers = ${list(d.green_readers)}
writer_is_also_reader = ${d.writer_is_also_reader ?? false}
check_interval_seconds = 0.2
check_timeout_seconds = 1
`,
  )
  .join('\n')}
${extra}`;
}

export interface SeenState {
  readonly deployment: string;
  readonly phase: BgdPhase;
  readonly previousPhase: BgdPhase;
}

/** Topology's GET /topology/mysql. */
export interface TopologyView {
  readonly overlay: { shunned: string[]; dns_pins: Record<string, string>; moved_writers: Record<string, { to: string }>; writers_serving_reads: string[]; draining: Record<string, number> };
  readonly read_only_suppression: Record<string, string[]>;
  readonly backends: { name: string; role: string; shard: string; connect_address: string; state: string }[];
  readonly snapshot: { shards: { shard: string; backends: { name: string; role: string; shunned: boolean; draining: boolean; dns_pin: string | null; serves_reads?: boolean }[] }[] } | null;
}

export interface Deployed {
  readonly runtime: Runtime;
  readonly admin: string;
  readonly states: SeenState[];
  readonly actions: BgdAction[];
  phases(deployment: string): BgdPhase[];
  waitForPhase(deployment: string, phase: BgdPhase, timeoutMs?: number): Promise<void>;
  bgd(): Promise<{ deployments: Record<string, unknown>[] }>;
  deployment(name: string): Promise<Record<string, unknown> & { phase: BgdPhase }>;
  topology(): Promise<TopologyView>;
  waitForTopology(predicate: (t: TopologyView) => boolean, description: string, timeoutMs?: number): Promise<TopologyView>;
  metrics(): Promise<string>;
  /** Publishes a new configuration epoch (as config-api would). */
  reconfigure(toml: string): Promise<void>;
  stop(): Promise<void>;
}

async function forgetEarlier(bus: Bus): Promise<void> {
  await (await openRecords(bus, KvRecords.config)).delete({});
  await (await openRecords(bus, KvRecords.topology)).delete({ protocol: 'mysql' });
}

/** Starts topology + bgd-monitor on `toml` (a fresh configuration and topology record in KV). */
export async function deploy(natsUrl: string, toml: string, services: readonly ServiceDefinition[] = [topologyService, bgdMonitorService]): Promise<Deployed> {
  const bus = createBus({ name: 'bgd-scenario', natsUrl });
  await bus.waitForConnection(5_000);
  await forgetEarlier(bus);
  const states: SeenState[] = [];
  const actions: BgdAction[] = [];
  const subs = [
    subscribeMessages(bus, Subjects.bgdState.pattern(), (s) => void states.push({ deployment: s.deployment, phase: s.phase, previousPhase: s.previousPhase })),
    subscribeMessages(bus, Subjects.bgdActions.pattern(), (a) => void actions.push(a)),
  ];
  const dir: TempDir = await tmpDir('bgd-scenario');
  const configPath = join(dir.path, 'dbproxy.toml');
  writeFileSync(configPath, toml);
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  const runtime = await startRuntime({ services, configPath, version: 'test', adminListen: '127.0.0.1:0', logDestination: quiet }).catch(async (err: unknown) => {
    for (const s of subs) s.unsubscribe();
    await bus.close();
    await dir.remove();
    throw new Error(`${String(err)} ${JSON.stringify((err as { issues?: unknown }).issues ?? '')}`);
  });
  const admin = `http://${runtime.adminAddress}`;
  let epoch = 1000;
  const d: Deployed = {
    runtime,
    admin,
    states,
    actions,
    phases: (name) => states.filter((s) => s.deployment === name).map((s) => s.phase),
    async waitForPhase(name, phase, timeoutMs = 15_000) {
      // Admin HTTP and the bus agree: a worker publishes its actions before the phase they lead
      // to, so once the bus has delivered the phase, the actions before it are recorded too.
      const lastOnBus = () => d.phases(name).slice(-1)[0];
      await waitFor(async () => lastOnBus() === phase && (await d.deployment(name)).phase === phase, { timeoutMs, intervalMs: 25, description: `${name} in ${phase}` }).catch(async (err: unknown) => {
        throw new Error(`${String(err)}; phases seen ${d.phases(name).join(' > ')}; GET /bgd ${JSON.stringify(await d.bgd())}`);
      });
    },
    bgd: async () => (await (await fetch(`${admin}/bgd`)).json()) as { deployments: Record<string, unknown>[] },
    async deployment(name) {
      const found = (await d.bgd()).deployments.find((x) => x['name'] === name);
      if (!found) throw new Error(`no deployment ${name} in GET /bgd`);
      return found as Record<string, unknown> & { phase: BgdPhase };
    },
    topology: async () => (await (await fetch(`${admin}/topology/mysql`)).json()) as TopologyView,
    async waitForTopology(predicate, description, timeoutMs = 10_000) {
      let last: TopologyView | undefined;
      await waitFor(async () => predicate((last = await d.topology())), { timeoutMs, intervalMs: 50, description }).catch((err: unknown) => {
        throw new Error(`${String(err)}; last: ${JSON.stringify({ overlay: last?.overlay, backends: last?.backends })}`);
      });
      return last as TopologyView;
    },
    metrics: async () => (await fetch(`${admin}/metrics`)).text(),
    async reconfigure(next) {
      const parsed = parseToml(next);
      if (!parsed.ok) throw new Error('bad toml');
      const store = await openRecords(bus, KvRecords.config);
      await store.put({}, { config: parsed.document as Record<string, unknown>, hash: `h${++epoch}`, author: 'scenario', appliedAt: new Date().toISOString(), comment: 'scenario step' });
    },
    async stop() {
      await runtime.stop('scenario done');
      for (const s of subs) s.unsubscribe();
      await bus.close();
      await dir.remove();
    },
  };
  await waitFor(async () => (await fetch(`${admin}/readyz`)).status === 200, { timeoutMs: 20_000, intervalMs: 50, description: 'topology + bgd-monitor ready' });
  return d;
}

/** The backends of estate A as [[mysql_backends]] lines (blue writer and reader; green ones only when explicit). */
export function backendsA(sim: RdsBgdSimulation, opts: { explicit?: boolean; readers?: readonly string[] } = {}): BackendLine[] {
  const lines: BackendLine[] = [{ name: 'orders-blue', address: sim.endpoint(A.blue).address, role: 'primary' }];
  for (const host of opts.readers ?? [A.blueReader]) lines.push({ name: host === A.blueReader ? 'orders-blue-r1' : 'orders-blue-r2', address: sim.endpoint(host).address, role: 'replica' });
  if (opts.explicit) {
    lines.push({ name: 'orders-green', address: sim.endpoint(A.green).address, role: 'primary', shard: 'green' });
    lines.push({ name: 'orders-green-r1', address: sim.endpoint(A.greenReader).address, role: 'replica', shard: 'green' });
  }
  return lines;
}
