// A backend entry, shared by [[mysql_backends]], [[postgres_backends]] and [[redis_backends]].
import { z } from 'zod';
import { address, backendTls, name, nonNegativeInt, nonNegativeSeconds, positiveInt, role } from './common';

const backendBase = {
  name,
  address,
  role,
  shard: name.default('default'),
  weight: positiveInt.max(1000, 'must be at most 1000').default(1),
  /** Replica lag above this leaves read selection (overrides the protocol's setting). */
  max_replica_lag_seconds: nonNegativeSeconds.optional(),
  tls: backendTls.default({}),
  /**
   * `offline_soft`: no new connections or sessions go to it, existing ones finish; `offline_hard`:
   * its connections are closed now. Offline backends are not eligible for blue/green mapping or drains.
   */
  status: z.enum(['online', 'offline_soft', 'offline_hard']).default('online'),
};

export const mysqlBackend = z
  .object({
    ...backendBase,
    username: z.string().default('root'),
    password: z.string().default(''),
    /** Extra primary connections kept for BEGIN and session pins (spec 000 reserved_pool). */
    reserved_pool: nonNegativeInt.default(0),
    pool_max: positiveInt.optional(),
    /** Account of topology's health checks (SELECT 1, @@read_only, SHOW SLAVE STATUS); overrides [mysql]'s; absent: the pool's. */
    monitor_username: z.string().optional(),
    monitor_password: z.string().optional(),
    /**
     * Open connections with a PROXY protocol v2 header (for MariaDB's proxy_protocol_networks):
     * the client's addresses on a connection opened for one client session, LOCAL on pooled ones.
     */
    proxy_protocol: z.boolean().default(false),
  })
  .strict();

export const postgresBackend = z
  .object({
    ...backendBase,
    username: z.string().default('postgres'),
    password: z.string().default(''),
    database: z.string().default('postgres'),
    /** Refused: PostgreSQL servers (15 included) do not read the PROXY protocol. */
    proxy_protocol: z
      .literal(false, { errorMap: () => ({ message: 'PostgreSQL servers do not read the PROXY protocol (PostgreSQL 15 has no support for it), so pg-edge cannot send one; remove the key' }) })
      .optional(),
  })
  .strict();

export const redisBackend = z
  .object({
    ...backendBase,
    username: z.string().optional(),
    password: z.string().optional(),
    db: nonNegativeInt.default(0),
  })
  .strict();

export type MysqlBackendConfig = z.infer<typeof mysqlBackend>;
export type PostgresBackendConfig = z.infer<typeof postgresBackend>;
export type RedisBackendConfig = z.infer<typeof redisBackend>;
