// An all-in-one ./bin/dbproxy for the operations tests: every edge on free loopback ports in
// front of the shared MariaDB and PostgreSQL and a given Redis, and its JSON log lines parsed.
import { freePort, waitFor } from '@dbproxy/testing';
import { startDbproxy, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';

export const APP_PASSWORD = 'ops-app-password-1';
export const ADMIN_TOKEN = 'ops-test-admin-token-1234';

export interface OpsPorts {
  readonly admin: number;
  readonly api: number;
  readonly mysql: number;
  readonly mysqlRo: number;
  readonly pg: number;
  readonly pgRo: number;
  readonly redis: number;
  readonly redisRo: number;
}

export async function opsPorts(): Promise<OpsPorts> {
  const [admin, api, mysql, mysqlRo, pg, pgRo, redis, redisRo] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  return { admin, api, mysql, mysqlRo, pg, pgRo, redis, redisRo } as OpsPorts;
}

export interface OpsConfig {
  readonly ports: OpsPorts;
  readonly redisAddress: string;
  readonly password?: string;
  readonly rateLimit?: number;
  /** Extra lines at the end of the file. */
  readonly extra?: string;
}

export function opsToml(c: OpsConfig): string {
  const p = c.ports;
  return `
[proxy]
shutdown_timeout_seconds = 2
[proxy.admin]
listen = "127.0.0.1:${p.admin}"
[bus]
connect_timeout_seconds = 1
[telemetry]
log_level = "info"
log_rate_limit_per_second = ${c.rateLimit ?? 50}
[[users]]
name = "app"
password = "${c.password ?? APP_PASSWORD}"
mysql_auth_plugin = "mysql_native_password"
[health]
interval_seconds = 0.5
timeout_seconds = 1
failures_before_down = 1
successes_before_up = 1
[mysql]
enabled = true
read_write_listen = "127.0.0.1:${p.mysql}"
read_only_listen = "127.0.0.1:${p.mysqlRo}"
[[mysql_backends]]
name = "mysql-primary"
address = "127.0.0.1:3306"
role = "primary"
username = "root"
password = ""
[postgres]
enabled = true
routing_mode = "transaction"
read_write_listen = "127.0.0.1:${p.pg}"
read_only_listen = "127.0.0.1:${p.pgRo}"
[[postgres_backends]]
name = "pg-primary"
address = "127.0.0.1:5432"
role = "primary"
username = "postgres"
database = "postgres"
[redis]
enabled = true
read_write_listen = "127.0.0.1:${p.redis}"
read_only_listen = "127.0.0.1:${p.redisRo}"
[[redis_backends]]
name = "redis-primary"
address = "${c.redisAddress}"
role = "primary"
[config_api]
listen = "127.0.0.1:${p.api}"
[[config_api.tokens]]
name = "admin"
token = "${ADMIN_TOKEN}"
role = "admin"
${c.extra ?? ''}`;
}

export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

/** The JSON lines the process wrote so far (anything else, e.g. stderr text, left out). */
export function logLines(proc: DbproxyProcess): LogLine[] {
  const out: LogLine[] = [];
  for (const line of proc.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // a line cut by the read: the next output() has it whole
    }
  }
  return out;
}

/** Waits for a log line matching `match`; returns it. */
export async function waitForLine(proc: DbproxyProcess, match: (line: LogLine) => boolean, description: string, timeoutMs = 10_000): Promise<LogLine> {
  let found: LogLine | undefined;
  await waitFor(
    () => {
      found = logLines(proc).find(match);
      return found !== undefined;
    },
    { timeoutMs, intervalMs: 50, description },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\n--- output ---\n${proc.output().slice(-6000)}`);
  });
  return found as LogLine;
}

/** Starts ./bin/dbproxy on `toml` (written into `dir`) and waits until /readyz says ready. */
export async function startOps(dir: string, toml: string, admin: number, args: readonly string[] = []): Promise<{ proc: DbproxyProcess; path: string }> {
  const path = writeConfig(dir, 'dbproxy.toml', toml);
  const proc = startDbproxy(['start', ...args, '--config', path]);
  await waitFor(
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`dbproxy exited ${proc.child.exitCode}:\n${proc.output()}`);
      const res = await fetch(`http://127.0.0.1:${admin}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs: 40_000, intervalMs: 200, description: 'dbproxy ready' },
  ).catch((err: unknown) => {
    void proc.stop('SIGKILL');
    throw new Error(`${String(err)}\n${proc.output().slice(-6000)}`);
  });
  return { proc, path };
}
