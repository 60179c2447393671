// What topology checks: each configured backend of a protocol, with the credentials of its pool
// and its lag limit (the backend's own max_replica_lag_seconds, else its protocol's).
import type { BackendRole, BackendStatus, Protocol } from '@dbproxy/bus';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export const PROTOCOLS: readonly Protocol[] = ['mysql', 'postgres', 'redis'];

export type BackendTls = DeepReadonly<DbproxyConfig['mysql_backends'][number]['tls']>;

export interface Credentials {
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** PostgreSQL: the database monitor connections open. */
  readonly database?: string | undefined;
}

/** One backend to check, as configured (or, for Redis Cluster nodes, as discovered). */
export interface BackendTarget {
  readonly protocol: Protocol;
  readonly name: string;
  readonly shard: string;
  readonly role: BackendRole;
  readonly address: string;
  readonly weight: number;
  /** The configured status (Redis Cluster nodes: online); published in the snapshot. */
  readonly status: BackendStatus;
  readonly maxLagSeconds: number;
  readonly credentials: Credentials;
  readonly tls: BackendTls | undefined;
}

type Config = DeepReadonly<DbproxyConfig>;

export function configuredTargets(config: Config, protocol: Protocol): BackendTarget[] {
  const common = (b: Config['mysql_backends'][number] | Config['postgres_backends'][number] | Config['redis_backends'][number], protocolLag: number) => ({
    protocol,
    name: b.name,
    shard: b.shard,
    role: b.role,
    address: b.address,
    weight: b.weight,
    status: b.status,
    maxLagSeconds: b.max_replica_lag_seconds ?? protocolLag,
    tls: b.tls.enabled ? b.tls : undefined,
  });
  switch (protocol) {
    case 'mysql':
      return config.mysql_backends.map((b) => ({ ...common(b, config.mysql.max_replica_lag_seconds), credentials: mysqlMonitorCredentials(config, b) }));
    case 'postgres':
      return config.postgres_backends.map((b) => ({
        ...common(b, config.postgres.max_replica_lag_seconds),
        credentials: { username: b.username, password: b.password, database: b.database },
      }));
    case 'redis':
      return config.redis_backends.map((b) => ({ ...common(b, config.redis.max_replica_lag_seconds), credentials: { username: b.username, password: b.password } }));
  }
}

/** The monitor account of a MySQL backend: its own monitor user, else [mysql]'s, else its pool account. */
export function mysqlMonitorCredentials(config: Config, b: Config['mysql_backends'][number]): Credentials {
  if (b.monitor_username !== undefined) return { username: b.monitor_username, password: b.monitor_password ?? '' };
  const m = config.mysql;
  if (m.monitor_username !== undefined) return { username: m.monitor_username, password: m.monitor_password ?? '' };
  return { username: b.username, password: b.password };
}

/** Splits `host:port` (IPv6 hosts in brackets). */
export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) };
}

/** Identity of a monitor connection: a change in any of these needs a new connection. */
export function connectionKey(target: BackendTarget, connectAddress: string): string {
  return JSON.stringify([target.protocol, connectAddress, target.credentials, target.tls ?? null]);
}
