// The operator CLI's test estate: a real nats-server, MariaDB with two replicas, config-api and
// topology in one ./bin/dbproxy process, mysql-edge in another, and the CLI run as users run it.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startMariaDb, startNats, tmpDir, type NatsServer, type TempDir } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'dbproxy');
export const ADMIN_TOKEN = 'ops-token-0123456789abcdef';
export const VIEWER_TOKEN = 'viewer-token-0123456789abcdef';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs ./bin/dbproxy with `args` (asynchronously: the test's own clients keep running). */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: unknown }).code as number) : 0;
      resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
    });
  });
}

export interface OperatorEstate {
  readonly nats: NatsServer;
  readonly db: Awaited<ReturnType<typeof startMariaDb>>;
  readonly dir: TempDir;
  readonly control: DbproxyProcess;
  readonly edge: DbproxyProcess;
  readonly apiUrl: string;
  readonly roPort: number;
  readonly rwPort: number;
  /** `--url` and `--token` for the CLI. */
  readonly api: string[];
  connect(port: number): Promise<Connection>;
  /** Root connection straight to a server, for its processlist. */
  direct(port: number): Promise<Connection>;
  stop(): Promise<void>;
}

function configToml(natsUrl: string, ports: Record<string, number>, db: OperatorEstate['db']): string {
  const [r1, r2] = db.replicas as [typeof db.primary, typeof db.primary];
  return `
[bus]
nats_url = "${natsUrl}"
connect_timeout_seconds = 3
heartbeat_interval_seconds = 1
[telemetry]
log_level = "warn"
[proxy.admin]
listen = "127.0.0.1:${ports['control']}"
mysql_edge = "127.0.0.1:${ports['edge']}"
[[users]]
name = "app"
password = "app-secret"
[health]
interval_seconds = 0.5
timeout_seconds = 1
failures_before_down = 1
successes_before_up = 1
[mysql]
enabled = true
read_write_listen = "127.0.0.1:${ports['rw']}"
read_only_listen = "127.0.0.1:${ports['ro']}"
read_after_write_seconds = 0
workers = 1
[postgres]
enabled = false
[redis]
enabled = false
[[mysql_backends]]
name = "primary"
address = "127.0.0.1:${db.primary.port}"
role = "primary"
[[mysql_backends]]
name = "r1"
address = "127.0.0.1:${r1.port}"
role = "replica"
[[mysql_backends]]
name = "r2"
address = "127.0.0.1:${r2.port}"
role = "replica"
[config_api]
listen = "127.0.0.1:${ports['api']}"
edge_heartbeat_ttl_seconds = 5
[[config_api.tokens]]
name = "ops"
token = "${ADMIN_TOKEN}"
[[config_api.tokens]]
name = "viewer"
token = "${VIEWER_TOKEN}"
role = "read_only"
`;
}

async function ready(proc: DbproxyProcess, port: number, what: string): Promise<void> {
  await waitForHttp(`http://127.0.0.1:${port}/readyz`, 200, 90_000).catch((err: unknown) => {
    throw new Error(`${what} did not become ready: ${String(err)}\n${proc.output()}`);
  });
}

export async function startOperatorEstate(): Promise<OperatorEstate> {
  const [nats, db, dir] = await Promise.all([startNats(), startMariaDb({ replicas: 2 }), tmpDir('operator-cli')]);
  const seed = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await seed.query('CREATE DATABASE app');
  await seed.query('CREATE TABLE app.t (id INT PRIMARY KEY, v INT)');
  await seed.query('INSERT INTO app.t VALUES (1, 10)');
  await seed.end();
  await db.waitForReplicaCatchUp();
  const ports: Record<string, number> = {};
  for (const name of ['control', 'edge', 'rw', 'ro', 'api']) ports[name] = await freePort();
  const path = writeConfig(dir.path, 'dbproxy.toml', configToml(nats.url, ports, db));
  const control = startDbproxy(['start', 'config-api', 'topology', '--config', path]);
  await ready(control, ports['control'] as number, 'config-api + topology');
  const edge = startDbproxy(['start', 'mysql-edge', '--config', path]);
  await ready(edge, ports['edge'] as number, 'mysql-edge');
  const apiUrl = `http://127.0.0.1:${ports['api']}`;
  return {
    nats,
    db,
    dir,
    control,
    edge,
    apiUrl,
    rwPort: ports['rw'] as number,
    roPort: ports['ro'] as number,
    api: ['--url', apiUrl, '--token', ADMIN_TOKEN],
    connect: (port) => createConnection({ host: '127.0.0.1', port, user: 'app', password: 'app-secret', database: 'app' }),
    direct: (port) => createConnection({ host: '127.0.0.1', port, user: 'root' }),
    async stop() {
      await Promise.all([edge.stop('SIGKILL'), control.stop('SIGKILL')]);
      await Promise.all([db.destroy(), nats.destroy()]);
      await dir.remove();
    },
  };
}

/** The server_id a statement ran on. */
export async function servedBy(c: Connection): Promise<number> {
  const [rows] = await c.query<RowDataPacket[]>('SELECT @@server_id AS id');
  return Number(rows[0]?.['id']);
}

/** Threads on a server that belong to the edge (they work in database `app`; ours have none). */
export async function edgeThreads(server: Connection): Promise<{ id: number; info: string | null }[]> {
  const [rows] = await server.query<RowDataPacket[]>("SELECT id, info FROM information_schema.processlist WHERE db = 'app'");
  return rows.map((r) => ({ id: Number(r['id']), info: (r['info'] as string | null) ?? null }));
}
