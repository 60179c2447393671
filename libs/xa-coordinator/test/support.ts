// Test support: two real MariaDB primaries (shards s1, s2) with table xa_test.items, a real
// nats-server, the xa-coordinator as a child process (`node bin/dbproxy start xa-coordinator`,
// so a test can SIGKILL it), a requester on NATS using XaClient, and readers of what each
// participant holds (rows, XA RECOVER through the mariadb CLI).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { createBus, KvRecords, openRecords, type Bus } from '@dbproxy/bus';
import { freePort, startMariaDb, startNats, waitFor, type MariaDbServer, type NatsServer, type ReplicatedServers } from '@dbproxy/testing';
import { FAULT_ENV, XaClient } from '../src';

const ROOT = join(__dirname, '..', '..', '..');

export interface Participants {
  readonly p1: MariaDbServer;
  readonly p2: MariaDbServer;
  readonly nats: NatsServer;
  destroy(): Promise<void>;
}

export async function query(server: MariaDbServer, sql: string): Promise<RowDataPacket[]> {
  const conn = await createConnection({ host: server.host, port: server.port, user: 'root', password: '', connectTimeout: 3000 });
  try {
    return (await conn.query<RowDataPacket[]>(sql))[0];
  } finally {
    await conn.end().catch(() => conn.destroy());
  }
}

export async function startParticipants(): Promise<Participants> {
  const groups: ReplicatedServers<MariaDbServer>[] = [];
  const nats = await startNats({ jetstream: true });
  try {
    groups.push(await startMariaDb({ replicas: 0, serverIdBase: 1 }));
    groups.push(await startMariaDb({ replicas: 0, serverIdBase: 11 }));
  } catch (err) {
    await Promise.all(groups.map((g) => g.destroy()));
    await nats.destroy();
    throw err;
  }
  const [g1, g2] = groups as [ReplicatedServers<MariaDbServer>, ReplicatedServers<MariaDbServer>];
  for (const g of groups) {
    await query(g.primary, 'CREATE DATABASE xa_test');
    await query(g.primary, 'CREATE TABLE xa_test.items (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB');
  }
  return {
    p1: g1.primary,
    p2: g2.primary,
    nats,
    async destroy() {
      await Promise.all(groups.map((g) => g.destroy()));
      await nats.destroy();
    },
  };
}

export async function clearTables(p: Participants): Promise<void> {
  for (const s of [p.p1, p.p2]) if (s.pid !== undefined) await query(s, 'DELETE FROM xa_test.items');
}

export async function ids(server: MariaDbServer): Promise<number[]> {
  return (await query(server, 'SELECT id FROM xa_test.items ORDER BY id')).map((r) => Number(r['id']));
}

/**
 * Rolls back every prepared branch a failed test left behind (its row locks would stall the next
 * test's DELETE); a passing test leaves none.
 */
export async function rollbackLeftovers(server: MariaDbServer): Promise<void> {
  if (server.pid === undefined) return;
  const conn = await createConnection({ host: server.host, port: server.port, user: 'root', password: '', connectTimeout: 3000 });
  try {
    const [rows] = await conn.query<RowDataPacket[]>({ sql: 'XA RECOVER', typeCast: (field, next) => (field.name === 'data' ? field.buffer() : next()) });
    for (const r of rows) {
      const data = r['data'] as Buffer;
      const g = Number(r['gtrid_length']);
      const b = Number(r['bqual_length']);
      await conn.query(`XA ROLLBACK X'${data.subarray(0, g).toString('hex')}',X'${data.subarray(g, g + b).toString('hex')}',${Number(r['formatID'])}`);
    }
  } finally {
    await conn.end().catch(() => conn.destroy());
  }
}

/** XA RECOVER through the mariadb CLI: the gtrid+bqual data of every prepared branch. */
export function xaRecover(server: MariaDbServer): string[] {
  const r = spawnSync('mariadb', ['-h', server.host, '-P', String(server.port), '-uroot', '--skip-ssl', '-N', '-B', '-e', 'XA RECOVER'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mariadb XA RECOVER failed: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t')[3] as string);
}

export interface CoordinatorSetup {
  readonly dir: string;
  readonly adminPort: number;
  readonly journalPath: string;
  readonly configPath: string;
}

export async function writeCoordinatorConfig(p: Participants, dir: string, extra = '', backends?: string, connectTimeoutSeconds = 2): Promise<CoordinatorSetup> {
  const adminPort = await freePort();
  const journalPath = join(dir, 'xa', 'journal');
  const configPath = join(dir, `xa-${adminPort}.toml`);
  const toml = `
[bus]
nats_url = "${p.nats.url}"
connect_timeout_seconds = 2
[telemetry]
log_level = "info"
[proxy.admin]
xa_coordinator = "127.0.0.1:${adminPort}"
[mysql]
connect_timeout_seconds = ${connectTimeoutSeconds}
[mysql.xa]
enabled = true
journal_path = "${journalPath}"
decision_timeout_seconds = 5
recovery_interval_seconds = 1
${extra}
${
  backends ??
  `[[mysql_backends]]
name = "p1"
address = "${p.p1.host}:${p.p1.port}"
role = "primary"
shard = "s1"
[[mysql_backends]]
name = "p2"
address = "${p.p2.host}:${p.p2.port}"
role = "primary"
shard = "s2"`
}
`;
  writeFileSync(configPath, toml);
  return { dir, adminPort, journalPath, configPath };
}

export interface CoordinatorProcess {
  readonly child: ChildProcess;
  readonly admin: string;
  output(): string;
  readonly exited: Promise<number | null>;
  /** SIGKILL, and waits for the exit. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** `node bin/dbproxy start xa-coordinator --config FILE` with `fault` armed (test-only hook). */
export function spawnCoordinator(setup: CoordinatorSetup, fault?: string): CoordinatorProcess {
  const args = [join(ROOT, 'bin', 'dbproxy'), 'start', 'xa-coordinator', '--config', setup.configPath];
  // env(1) adds the variable to the inherited environment; `exec` keeps one process, so the pid is the coordinator's
  const child = fault
    ? spawn('sh', ['-c', `exec env ${FAULT_ENV}=${fault} "$0" "$@"`, process.execPath, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout?.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (text += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    admin: `http://127.0.0.1:${setup.adminPort}`,
    output: () => text,
    exited,
    async kill9() {
      if (running()) process.kill(child.pid as number, 'SIGKILL');
      await exited;
    },
    async stop() {
      if (running()) child.kill('SIGTERM');
      await exited;
    },
  };
}

// generous: a loaded CI machine can take long to start a process and run its first recovery pass
export async function waitReady(coordinator: CoordinatorProcess, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      if (coordinator.child.exitCode !== null) throw new Error(`coordinator exited:\n${coordinator.output()}`);
      const res = await fetch(`${coordinator.admin}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs, intervalMs: 100, description: 'xa-coordinator ready' },
  );
}

export async function startCoordinator(setup: CoordinatorSetup, fault?: string): Promise<CoordinatorProcess> {
  const c = spawnCoordinator(setup, fault);
  await waitReady(c).catch(async (err: unknown) => {
    await c.kill9();
    // what the coordinator logged says why it never became ready
    throw new Error(`${err instanceof Error ? err.message : String(err)}; coordinator output:\n${c.output().slice(-4000)}`);
  });
  return c;
}

export async function requester(p: Participants): Promise<{ bus: Bus; client: XaClient }> {
  const bus = createBus({ name: 'xa-test-requester', natsUrl: p.nats.url });
  await bus.waitForConnection(5000);
  return { bus, client: new XaClient(bus, { requestedBy: 'xa-test', commitAllowanceMs: 2000 }) };
}

export const BOTH = [
  { shard: 's1', backend: 'p1' },
  { shard: 's2', backend: 'p2' },
];

export async function getXa(c: CoordinatorProcess): Promise<{ coordinator: string; in_doubt: { xid: string; backend: string; ours: boolean; decision: string; age_seconds: number | null }[] }> {
  return (await (await fetch(`${c.admin}/xa`)).json()) as never;
}

/**
 * Deletes the configuration record on NATS: a coordinator started with --config follows the KV
 * when it holds a configuration (the epoch design), so each test seeds its own backends.
 */
export async function forgetConfig(bus: Bus): Promise<void> {
  await (await openRecords(bus, KvRecords.config)).delete({});
}
