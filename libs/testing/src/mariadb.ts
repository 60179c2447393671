// MariaDB primary with replicas on real GTID replication, each a fresh copy of a mariadb-install-db template.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { InvalidOption, ReplicationFailed } from './errors';
import { replicatedServers, settleAll, startGroup, type ReplicatedServers, type ServerGroup } from './group';
import { LocalServer, startOnFreePort, type ServerEndpoint, type ServerLaunch, type ServerProcess } from './server-process';
import { copyTree, findBinary, isRoot, runCommand } from './system';
import { binaryFingerprint, cachedTemplate } from './templates';
import { waitFor } from './wait';

export interface MariaDbOptions {
  /** Number of replicas (default 1). */
  replicas?: number;
  /** server_id of the primary; replica i gets serverIdBase + i (default 1). */
  serverIdBase?: number;
  /**
   * Server options over the small test defaults, for every member, as `--name=value` (e.g.
   * `{ 'innodb-buffer-pool-size': '256M' }` for a benchmark whose tables must stay in memory).
   */
  settings?: Readonly<Record<string, string>>;
}

/** A MariaDB server; connect over TCP as root with an empty password. */
export interface MariaDbServer extends ServerProcess {
  readonly user: 'root';
  readonly password: '';
  readonly serverId: number;
}

class MariaDbNode extends LocalServer implements MariaDbServer {
  readonly user = 'root' as const;
  readonly password = '' as const;

  constructor(
    launch: ServerLaunch,
    port: number,
    readonly serverId: number,
  ) {
    super(launch, port);
  }
}

/** The account replicas use to connect to the primary (REPLICATION SLAVE only). */
export const MARIADB_REPLICATION_USER = { user: 'repl', password: 'repl' } as const;

/** Options that shape the InnoDB files: the template and every instance must agree on them. */
const INNODB_FILE_OPTIONS = [
  '--innodb-log-file-size=4M',
  '--innodb-data-file-path=ibdata1:1M:autoextend',
  '--innodb-temp-data-file-path=ibtmp1:1M:autoextend',
  '--innodb-undo-tablespaces=0',
];

/** Small memory, no fsync per commit (survives a killed server, not a killed machine), fast start. */
const INSTANCE_OPTIONS = [
  '--bind-address=127.0.0.1',
  '--skip-name-resolve',
  '--character-set-server=utf8mb4',
  '--collation-server=utf8mb4_general_ci',
  '--innodb-buffer-pool-size=16M',
  '--innodb-log-buffer-size=2M',
  '--innodb-autoextend-increment=4',
  '--innodb-flush-log-at-trx-commit=2',
  '--innodb-doublewrite=0',
  '--key-buffer-size=1M',
  '--aria-pagecache-buffer-size=8M',
  '--performance-schema=OFF',
  '--max-connections=200',
  '--log-basename=mariadb',
  '--log-bin',
  '--binlog-format=ROW',
  '--log-slave-updates',
  '--slave-net-timeout=10',
];

const TEMPLATE_SQL = `FLUSH PRIVILEGES;
CREATE USER '${MARIADB_REPLICATION_USER.user}'@'127.0.0.1' IDENTIFIED BY '${MARIADB_REPLICATION_USER.password}';
GRANT REPLICATION SLAVE ON *.* TO '${MARIADB_REPLICATION_USER.user}'@'127.0.0.1';
DELETE FROM mysql.global_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1');
DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost', '127.0.0.1', '::1');
`;

function asRoot(): string[] {
  return isRoot() ? ['--user=root'] : [];
}

/** The system tables, created once per machine and binary version by mariadb-install-db. */
function mariaDbTemplate(): Promise<string> {
  const installArgs = ['--auth-root-authentication-method=normal', '--skip-test-db', '--skip-name-resolve', ...INNODB_FILE_OPTIONS];
  const fingerprint = [binaryFingerprint(findBinary('mariadbd')), TEMPLATE_SQL, ...installArgs].join('\n');
  return cachedTemplate('mariadb', fingerprint, async (dir) => {
    const sqlFile = join(dir, 'template.sql');
    await writeFile(sqlFile, TEMPLATE_SQL);
    const args = ['--no-defaults', ...asRoot(), `--datadir=${join(dir, 'data')}`, `--extra-file=${sqlFile}`, ...installArgs, `--tmpdir=${await ownTmpDir(dir)}`];
    await runCommand(findBinary('mariadb-install-db'), args, { cwd: dir });
  });
}

/**
 * A server's own temporary directory. mariadbd deletes every `#sql*` file in its tmpdir when it
 * starts, so a test server sharing /tmp with the machine's MariaDB would delete that server's
 * in-use temporary tables (its queries then fail with "Error on delete of '/tmp/#sql-temptable-…'").
 */
async function ownTmpDir(dir: string): Promise<string> {
  const path = join(dir, 'tmp');
  await mkdir(path, { recursive: true });
  return path;
}

/** Runs `work` on a fresh root connection to `server`. */
export async function withMariaDb<T>(server: ServerEndpoint, work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await createConnection({ host: server.host, port: server.port, user: 'root', password: '', connectTimeout: 3_000 });
  try {
    return await work(connection);
  } finally {
    await connection.end().catch(() => connection.destroy());
  }
}

async function queryRows(server: ServerEndpoint, sql: string): Promise<RowDataPacket[]> {
  return withMariaDb(server, async (connection) => (await connection.query<RowDataPacket[]>(sql))[0]);
}

async function startNode(group: ServerGroup, template: string, name: string, serverId: number, replica: boolean, settings: Readonly<Record<string, string>>): Promise<MariaDbNode> {
  const dir = await group.memberDir(name);
  const dataDir = join(dir, 'data');
  await copyTree(join(template, 'data'), dataDir);
  const tmpDir = await ownTmpDir(dir);
  const launch: ServerLaunch = {
    name: `mariadb ${name}`,
    dir,
    dataDir,
    command: findBinary('mariadbd'),
    args: (port) => [
      '--no-defaults',
      ...asRoot(),
      `--datadir=${dataDir}`,
      `--port=${port}`,
      `--socket=${join(dir, 'mariadbd.sock')}`,
      `--pid-file=${join(dir, 'mariadbd.pid')}`,
      `--tmpdir=${tmpDir}`,
      `--server-id=${serverId}`,
      ...(replica ? ['--read-only=ON'] : []),
      ...INNODB_FILE_OPTIONS,
      ...INSTANCE_OPTIONS,
      // later options win: the caller's settings over the defaults above
      ...Object.entries(settings).map(([k, v]) => `--${k}=${v}`),
    ],
    stopSignal: 'SIGTERM',
    quickExitSignal: 'SIGKILL',
    // Ready when it answers SQL and it is our server (not another process that took the port).
    probe: async (server) => {
      const [row] = await queryRows(server, 'SELECT @@datadir AS dir');
      return String(row?.dir).replace(/\/$/, '') === dataDir;
    },
  };
  return group.track(await startOnFreePort((port) => new MariaDbNode(launch, port, serverId)));
}

async function replicaStatus(replica: MariaDbServer): Promise<RowDataPacket | undefined> {
  return (await queryRows(replica, 'SHOW SLAVE STATUS'))[0];
}

function replicationError(replica: MariaDbServer, reason: string, status: RowDataPacket | undefined): Error {
  const detail = status
    ? `IO ${status.Slave_IO_Running} ${status.Last_IO_Error}; SQL ${status.Slave_SQL_Running} ${status.Last_SQL_Error}`
    : 'no status';
  return ReplicationFailed(replica.name, `${reason} (${detail})`, replica.logFile, replica.logTail());
}

async function attachReplica(replica: MariaDbServer, primary: MariaDbServer): Promise<void> {
  const { user, password } = MARIADB_REPLICATION_USER;
  await withMariaDb(replica, async (connection) => {
    await connection.query(
      `CHANGE MASTER TO MASTER_HOST='${primary.host}', MASTER_PORT=${primary.port}, MASTER_USER='${user}', ` +
        `MASTER_PASSWORD='${password}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1`,
    );
    await connection.query('START SLAVE');
  });
  const running = (s: RowDataPacket | undefined): boolean => s?.Slave_IO_Running === 'Yes' && s?.Slave_SQL_Running === 'Yes';
  await waitFor(async () => running(await replicaStatus(replica)), { timeoutMs: 30_000, description: `${replica.name} replicating` }).catch(
    async () => {
      throw replicationError(replica, `did not start replicating from ${primary.name}`, await replicaStatus(replica));
    },
  );
}

/** Waits until each replica has applied the primary's current GTID position (MASTER_GTID_WAIT). */
async function catchUp(primary: MariaDbServer, replicas: readonly MariaDbServer[], timeoutMs: number): Promise<void> {
  const [row] = await queryRows(primary, 'SELECT @@gtid_binlog_pos AS pos');
  const position = String(row?.pos ?? '');
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const waitOne = async (replica: MariaDbServer): Promise<void> => {
    const sql = 'SELECT MASTER_GTID_WAIT(?, ?) AS r';
    const [result] = await withMariaDb(replica, async (c) => (await c.query<RowDataPacket[]>(sql, [position, seconds]))[0]);
    if (Number(result?.r) !== 0) {
      throw replicationError(replica, `not at GTID ${position} after ${timeoutMs} ms`, await replicaStatus(replica));
    }
  };
  await settleAll(replicas.map(waitOne));
}

/**
 * Starts a MariaDB primary (binary log, GTID) and `replicas` replicas replicating from it with
 * CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos, each with its own server_id, port and files.
 */
export async function startMariaDb(options: MariaDbOptions = {}): Promise<ReplicatedServers<MariaDbServer>> {
  const replicaCount = options.replicas ?? 1;
  const idBase = options.serverIdBase ?? 1;
  if (!Number.isInteger(replicaCount) || replicaCount < 0) throw InvalidOption('replicas', `expected an integer >= 0, got ${replicaCount}`);
  if (!Number.isInteger(idBase) || idBase < 1) throw InvalidOption('serverIdBase', `expected an integer >= 1, got ${idBase}`);
  const settings = options.settings ?? {};
  for (const name of Object.keys(settings)) {
    if (!/^[a-z][a-z0-9_-]*$/.test(name)) throw InvalidOption('settings', `expected option names like innodb-buffer-pool-size, got ${JSON.stringify(name)}`);
  }
  return startGroup('mariadb', async (group) => {
    const template = await mariaDbTemplate();
    const names = Array.from({ length: replicaCount }, (_, i) => `replica${i + 1}`);
    const [primary, ...replicas] = await settleAll([
      startNode(group, template, 'primary', idBase, false, settings),
      ...names.map((name, i) => startNode(group, template, name, idBase + i + 1, true, settings)),
    ]);
    await settleAll(replicas.map((replica) => attachReplica(replica, primary)));
    return replicatedServers(group, primary, replicas, (running, timeoutMs) => catchUp(primary, running, timeoutMs));
  });
}
