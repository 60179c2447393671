// PostgreSQL primary with streaming replicas (pg_basebackup -R), run as the postgres user from an initdb template.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { InvalidOption, ReplicationFailed } from './errors';
import { replicatedServers, settleAll, startGroup, type ReplicatedServers, type ServerGroup } from './group';
import { LocalServer, startOnFreePort, type ServerLaunch, type ServerProcess } from './server-process';
import { makeDir } from './temp-dir';
import { accountToRunAs, copyTree, postgresBinDir, runCommand, type SystemUser } from './system';
import { binaryFingerprint, cachedTemplate } from './templates';
import { waitFor } from './wait';

export interface PostgresOptions {
  /** Number of streaming replicas (default 1). */
  replicas?: number;
  /** Server settings over the small test defaults (e.g. `{ max_connections: '300' }` for a benchmark), for every member. */
  settings?: Readonly<Record<string, string>>;
}

/** A PostgreSQL server; connect over TCP to 127.0.0.1 as `postgres` (trust auth) to database `postgres`. */
export interface PostgresServer extends ServerProcess {
  readonly user: 'postgres';
  readonly database: 'postgres';
}

class PostgresNode extends LocalServer implements PostgresServer {
  readonly user = 'postgres' as const;
  readonly database = 'postgres' as const;
}

const INITDB_ARGS = ['-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--wal-segsize=1', '--no-sync', '--no-instructions'];

/** Small memory, no fsync (survives a killed server, not a killed machine), quick replica reconnects. */
const SETTINGS: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  shared_buffers: '16MB',
  max_connections: '100',
  fsync: 'off',
  jit: 'off',
  wal_level: 'replica',
  max_wal_senders: '10',
  max_replication_slots: '10',
  // replicas are base-backed-up at the same time, each with a fast checkpoint: keep the WAL the
  // other still streams (else "requested WAL segment ... has already been removed")
  wal_keep_size: '256MB',
  hot_standby: 'on',
  hot_standby_feedback: 'on',
  wal_retrieve_retry_interval: '500ms',
  log_line_prefix: '%m [%p] %q%a ',
};

function postgresUser(): SystemUser | undefined {
  return accountToRunAs('postgres');
}

/** An initdb'd, never started cluster, built once per machine and PostgreSQL binary. */
function postgresTemplate(): Promise<string> {
  const bin = postgresBinDir();
  const fingerprint = [binaryFingerprint(join(bin, 'postgres')), ...INITDB_ARGS].join('\n');
  return cachedTemplate('postgres', fingerprint, async (dir) => {
    const runAs = postgresUser();
    const dataDir = await makeDir(dir, 'data', 0o700, runAs);
    await runCommand(join(bin, 'initdb'), ['-D', dataDir, ...INITDB_ARGS], { runAs, cwd: dir });
  });
}

/** Runs `work` on a fresh connection to `server`. */
async function withPostgres<T>(server: ServerProcess, work: (client: Client) => Promise<T>): Promise<T> {
  const { host, port } = server;
  const client = new Client({ host, port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function queryValue(server: ServerProcess, sql: string, params: unknown[] = []): Promise<unknown> {
  return withPostgres(server, async (client) => Object.values((await client.query(sql, params)).rows[0] ?? {})[0]);
}

/** After a SIGKILL the System V segment of the postmaster outlives it; remove it once nothing is attached. */
function releaseSharedMemory(dataDir: string): Promise<void> {
  const lockFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(lockFile)) return Promise.resolve();
  const [key, id] = (readFileSync(lockFile, 'utf8').split('\n')[6] ?? '').trim().split(/\s+/);
  const orphan = readFileSync('/proc/sysvipc/shm', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find(([k, shmid, , , , , nattch]) => k === key && shmid === id && nattch === '0');
  return orphan ? runCommand('ipcrm', ['-m', String(id)]).then(() => undefined) : Promise.resolve();
}

async function startNode(dir: string, dataDir: string, name: string, overrides: Readonly<Record<string, string>>): Promise<PostgresNode> {
  const settings = Object.entries({ ...SETTINGS, ...overrides, cluster_name: name }).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const launch: ServerLaunch = {
    name: `postgres ${name}`,
    dir,
    dataDir,
    command: join(postgresBinDir(), 'postgres'),
    args: (port) => ['-D', dataDir, '-p', String(port), ...settings],
    runAs: postgresUser(),
    stopSignal: 'SIGINT', // fast shutdown: disconnects clients instead of waiting for them
    quickExitSignal: 'SIGQUIT', // immediate shutdown; the postmaster still frees its shared memory
    probe: async (server) => (await queryValue(server, "SELECT current_setting('data_directory')")) === dataDir,
    afterExit: () => releaseSharedMemory(dataDir),
  };
  return startOnFreePort((port) => new PostgresNode(launch, port));
}

async function startPrimary(group: ServerGroup, template: string, overrides: Readonly<Record<string, string>>): Promise<PostgresNode> {
  const dir = await group.memberDir('primary');
  const dataDir = join(dir, 'data');
  await copyTree(join(template, 'data'), dataDir);
  return group.track(await startNode(dir, dataDir, 'primary', overrides));
}

/** Base backup of the primary with a replication slot named after the replica, then streaming. */
async function startReplica(group: ServerGroup, primary: PostgresNode, name: string, overrides: Readonly<Record<string, string>>): Promise<PostgresNode> {
  const runAs = postgresUser();
  const dir = await group.memberDir(name);
  const dataDir = await makeDir(dir, 'data', 0o700, runAs);
  const source = ['-h', primary.host, '-p', String(primary.port), '-U', 'postgres'];
  const backup = ['-D', dataDir, '-R', '-c', 'fast', '-C', '-S', name, '-X', 'stream', '--no-sync'];
  await runCommand(join(postgresBinDir(), 'pg_basebackup'), [...source, ...backup], { runAs, cwd: dir });
  const replica = group.track(await startNode(dir, dataDir, name, overrides));
  const streaming = "SELECT count(*)::int FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'";
  await waitFor(async () => (await queryValue(primary, streaming, [name])) === 1, { timeoutMs: 30_000 }).catch((err) => {
    throw ReplicationFailed.withCause(err, replica.name, `not streaming from ${primary.name}`, replica.logFile, replica.logTail());
  });
  return replica;
}

/** Waits until each replica has replayed the primary's current WAL position. */
async function catchUp(primary: PostgresNode, replicas: readonly PostgresNode[], timeoutMs: number): Promise<void> {
  const lsn = String(await queryValue(primary, 'SELECT pg_current_wal_lsn()'));
  const replayed = 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn';
  const waitOne = (replica: PostgresNode): Promise<unknown> =>
    waitFor(async () => (await queryValue(replica, replayed, [lsn])) === true, { timeoutMs, intervalMs: 20 }).catch((err) => {
      throw ReplicationFailed.withCause(err, replica.name, `not at LSN ${lsn} after ${timeoutMs} ms`, replica.logFile, replica.logTail());
    });
  await settleAll(replicas.map(waitOne));
}

/**
 * Starts a PostgreSQL primary and `replicas` hot-standby replicas streaming from it through
 * physical replication slots named `replica1`, `replica2`, ... (also their application_name).
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<ReplicatedServers<PostgresServer>> {
  const replicaCount = options.replicas ?? 1;
  if (!Number.isInteger(replicaCount) || replicaCount < 0) throw InvalidOption('replicas', `expected an integer >= 0, got ${replicaCount}`);
  return startGroup('postgres', async (group) => {
    const overrides = options.settings ?? {};
    const primary = await startPrimary(group, await postgresTemplate(), overrides);
    const names = Array.from({ length: replicaCount }, (_, i) => `replica${i + 1}`);
    const replicas = await settleAll(names.map((name) => startReplica(group, primary, name, overrides)));
    return replicatedServers(group, primary, replicas, (running, timeoutMs) => catchUp(primary, running, timeoutMs));
  });
}
