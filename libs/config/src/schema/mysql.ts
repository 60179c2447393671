// [mysql] with [mysql.sharding], [mysql.cache], [[mysql.fanout]] and [mysql.xa].
import { z } from 'zod';
import { handshakeRoute } from './routes';
import { listenAddress, name, nonNegativeInt, nonNegativeSeconds, pipelineDepth, positiveInt, positiveSeconds, shardMap } from './common';

export const shardRule = z
  .object({
    table: z.string().regex(/^[A-Za-z0-9_$]+(\.[A-Za-z0-9_$]+)?$/, 'expected table or schema.table'),
    column: z.string().regex(/^[A-Za-z0-9_$]+$/, 'expected a column name'),
    map: shardMap,
  })
  .strict();

export const mysqlSharding = z
  .object({
    enabled: z.boolean().default(false),
    /** A statement whose keys span shards or cannot be pinned to one: run on all, or reject. */
    multi_shard: z.enum(['all_shards', 'reject']).default('reject'),
    /** Where statements that touch no sharded table go. */
    default_shard: name.default('default'),
    rules: z.array(shardRule).default([]),
  })
  .strict();

export const mysqlCache = z
  .object({
    enabled: z.boolean().default(false),
    /** Name of a [[redis_backends]] entry that stores cached results. */
    redis_backend: name.optional(),
    /** The longest a cached result lives: the bound on staleness after writes that bypass the proxy. */
    ttl_seconds: positiveSeconds.default(60),
    /** Results larger than this (bytes as the client receives them) are not stored. */
    max_entry_bytes: positiveInt.default(1048576),
    /** The cached tables, `schema.table`: only SELECTs all of whose tables are listed are cached. */
    tables: z.array(z.string().regex(/^[A-Za-z0-9_$]+\.[A-Za-z0-9_$]+$/, 'expected schema.table')).default([]),
  })
  .strict();

export const mysqlFanout = z
  .object({
    name,
    /** The table whose INSERT/UPDATE/DELETE/REPLACE statements are copied: `table` (any database) or `schema.table`. */
    table: z.string().regex(/^[A-Za-z0-9_$]+(\.[A-Za-z0-9_$]+)?$/, 'expected table or schema.table'),
    /** Shards that receive a copy of each matching DML statement (on their primary). */
    targets: z.array(name).min(1, 'needs at least one target shard'),
    mode: z.enum(['best_effort', 'xa']).default('best_effort'),
    /** Copies of this fanout in flight at once (per edge process); more wait in order. */
    concurrency: positiveInt.default(4),
    /** How long a client's OK waits for its copies (queue wait included); a copy not done by then is abandoned and warned about. */
    timeout_seconds: positiveSeconds.default(10),
    /** Bytes of copies one client transaction may queue until its COMMIT; a statement past it is refused (1197). */
    max_transaction_bytes: positiveInt.default(8388608),
  })
  .strict();

export const mysqlXa = z
  .object({
    enabled: z.boolean().default(false),
    journal_path: z.string().default('./data/xa-journal'),
    decision_timeout_seconds: positiveSeconds.default(10),
    recovery_interval_seconds: positiveSeconds.default(5),
    /** Decisions that arrive while the journal's fsync runs share the next one (off: one fsync per decision). */
    group_commit: z.boolean().default(true),
    /** Participants one transaction works on at the same time (XA START … PREPARE, COMMIT). */
    participant_concurrency: positiveInt.default(8),
    /** Transactions the coordinator runs at once; more are refused with DBP_ERR_XA_BUSY. */
    max_in_flight: positiveInt.default(256),
  })
  .strict();

export const mysqlSection = z
  .object({
    enabled: z.boolean().default(false),
    read_write_listen: listenAddress.default('0.0.0.0:6033'),
    read_only_listen: listenAddress.default('0.0.0.0:6034'),
    max_connections: positiveInt.default(4096),
    workers: nonNegativeInt.default(0),
    /** The greeting's server version; absent: the default shard primary's own, with "-dbproxy". */
    server_version: z.string().optional(),
    /** Default account of topology's health checks of [[mysql_backends]] (ProxySQL's monitor user); absent: each backend's pool account. */
    monitor_username: z.string().optional(),
    monitor_password: z.string().optional(),
    connect_timeout_seconds: positiveSeconds.default(5),
    query_timeout_seconds: positiveSeconds.default(30),
    pool_acquire_timeout_seconds: positiveSeconds.default(5),
    pool_max_per_backend: positiveInt.default(32),
    pool_idle_timeout_seconds: positiveSeconds.default(300),
    pool_max_lifetime_seconds: positiveSeconds.default(3600),
    /**
     * When every pooled connection of a backend is lent, a single-statement replica-safe read in
     * autocommit may be written behind the reads already running on one of them (the server answers
     * in order), up to this many per lending of the connection (1 = never; each waits for its own).
     */
    pipeline_depth: pipelineDepth,
    read_after_write_seconds: nonNegativeSeconds.default(2),
    /**
     * "window": reads go to the primary for read_after_write_seconds after a write. "causal": the
     * session remembers the GTID its write committed as (MariaDB last_gtid session tracking) and a
     * later read runs on a replica that has applied it (waiting up to causal_wait_ms), else the primary.
     */
    read_consistency: z.enum(['window', 'causal']).default('window'),
    /** Causal reads: how long a read waits on a replica for the session's last write (MASTER_GTID_WAIT) before the primary serves it. */
    causal_wait_ms: z.number().int().min(0).max(60000).default(200),
    max_replica_lag_seconds: nonNegativeSeconds.default(30),
    fallback_to_primary: z.boolean().default(true),
    multi_statements: z.enum(['reject', 'primary']).default('reject'),
    /** Offer CLIENT_LOCAL_FILES to clients (and ask backends for it for those that take it): LOAD DATA LOCAL INFILE is relayed. */
    local_infile: z.boolean().default(false),
    /**
     * Who checks a client's password: "proxy" ([[users]]) or "passthrough" (the shard primary does,
     * through a dedicated connection the session is pinned to; the proxy holds no password).
     */
    auth: z.enum(['proxy', 'passthrough']).default('proxy'),
    max_packet_bytes: positiveInt.default(67108864),
    max_result_bytes: positiveInt.default(268435456),
    max_prepared_statements: positiveInt.default(1024),
    max_prepared_statement_bytes: positiveInt.default(16777216),
    classification_cache_size: positiveInt.default(10000),
    pressure_margin: z.number().min(0).max(10).default(0.25),
    allowed_functions: z.array(z.string()).default([]),
    /** Bound on node-sql-parser's work per new statement shape (SqlRouter maxParseTokens); longer statements are not parsed. */
    max_parse_tokens: positiveInt.default(200),
    sharding: mysqlSharding.default({}),
    /** Handshake routes: the first whose database/user match picks the session's shard. */
    routes: z.array(handshakeRoute).default([]),
    /** With routes: the shard of a login no route matches; absent: such a login is refused (1049). */
    route_default: name.optional(),
    cache: mysqlCache.default({}),
    fanout: z.array(mysqlFanout).default([]),
    xa: mysqlXa.default({}),
  })
  .strict();
