// One deployment's configuration as its worker uses it: the [[bgd_deployments]] row resolved
// against [[mysql_backends]] (eligible servers only), and the checksum that signals a refresh.
import { createHash } from 'node:crypto';
import type { BgdDeploymentConfig, DbproxyConfig, DeepReadonly } from '@dbproxy/config';

type Config = DeepReadonly<DbproxyConfig>;
type MysqlBackend = Config['mysql_backends'][number];
export type BackendTlsSettings = MysqlBackend['tls'];

/** A [[mysql_backends]] entry as the monitor sees it. */
export interface ServerRef {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly shard: string;
  readonly tls: BackendTlsSettings;
  readonly username: string;
  readonly password: string;
}

export interface DeploymentSettings {
  readonly name: string;
  readonly enabled: boolean;
  readonly writerIsAlsoReader: boolean;
  readonly baselineMs: number;
  readonly timeoutMs: number;
  /** Undefined when the configured blue writer is missing or not eligible: no worker runs. */
  readonly blueWriter: ServerRef | undefined;
  readonly blueReaders: readonly ServerRef[];
  /** Explicit mode: the configured green writer; automatic mode: undefined (discovered at run time). */
  readonly greenWriter: ServerRef | undefined;
  readonly greenReaders: readonly ServerRef[];
  readonly mode: 'explicit' | 'automatic';
  readonly checksum: string;
}

/**
 * Whether a backend may take part in mapping and drains. Spec 001 excludes OFFLINE_SOFT and
 * OFFLINE_HARD servers: a backend whose `status` is offline_soft or offline_hard is neither mapped
 * nor drained.
 */
export function isOnline(backend: MysqlBackend): boolean {
  return backend.status === 'online';
}

export function splitHostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(address.slice(at + 1)) };
}

function serverRef(config: Config, backend: MysqlBackend): ServerRef {
  const { host, port } = splitHostPort(backend.address);
  const username = backend.monitor_username ?? config.mysql.monitor_username ?? backend.username;
  const password = backend.monitor_username !== undefined ? (backend.monitor_password ?? '') : config.mysql.monitor_username !== undefined ? (config.mysql.monitor_password ?? '') : backend.password;
  return { name: backend.name, host, port, shard: backend.shard, tls: backend.tls, username, password };
}

function eligible(config: Config, names: readonly string[]): MysqlBackend[] {
  return names.map((n) => config.mysql_backends.find((b) => b.name === n)).filter((b): b is MysqlBackend => b !== undefined && isOnline(b));
}

/** The checksum over the deployment row and its eligible blue and green backend rows. */
function checksumOf(row: DeepReadonly<BgdDeploymentConfig>, backends: readonly MysqlBackend[]): string {
  return createHash('sha256').update(JSON.stringify({ row, backends })).digest('hex').slice(0, 16);
}

/** `row.protocol` is always "mysql": spec 001 covers RDS MySQL blue/green deployments only. */
export function deploymentSettings(config: Config, row: DeepReadonly<BgdDeploymentConfig>): DeploymentSettings {
  const [writer] = eligible(config, [row.blue_writer]);
  const readers = eligible(config, row.blue_readers);
  const [greenWriter] = row.green_writer === undefined ? [] : eligible(config, [row.green_writer]);
  const greenReaders = eligible(config, row.green_readers);
  const all = [writer, ...readers, greenWriter, ...greenReaders].filter((b): b is MysqlBackend => b !== undefined);
  return {
    name: row.name,
    enabled: row.enabled,
    writerIsAlsoReader: row.writer_is_also_reader,
    baselineMs: row.check_interval_seconds * 1000,
    timeoutMs: row.check_timeout_seconds * 1000,
    blueWriter: writer && serverRef(config, writer),
    blueReaders: readers.map((b) => serverRef(config, b)),
    greenWriter: greenWriter && serverRef(config, greenWriter),
    greenReaders: greenReaders.map((b) => serverRef(config, b)),
    mode: row.green_writer === undefined ? 'automatic' : 'explicit',
    checksum: checksumOf(row, all),
  };
}

/** Every configured deployment that should have a worker: enabled, with an eligible blue writer. */
export function activeDeployments(config: Config): DeploymentSettings[] {
  return config.bgd_deployments.map((row) => deploymentSettings(config, row)).filter((d) => d.enabled && d.blueWriter !== undefined);
}
