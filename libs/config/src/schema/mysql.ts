// [mysql] with [mysql.sharding], [mysql.cache], [[mysql.fanout]] and [mysql.xa].
import { z } from 'zod';
import { listenAddress, name, nonNegativeInt, nonNegativeSeconds, positiveInt, positiveSeconds, shardMap } from './common';

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
    pipeline_depth: z.number().int().min(1).max(64).default(1),
    read_after_write_seconds: nonNegativeSeconds.default(2),
    max_replica_lag_seconds: nonNegativeSeconds.default(30),
    fallback_to_primary: z.boolean().default(true),
    multi_statements: z.enum(['reject', 'primary']).default('reject'),
    /** Offer CLIENT_LOCAL_FILES to clients (and ask backends for it for those that take it): LOAD DATA LOCAL INFILE is relayed. */
    local_infile: z.boolean().default(false),
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
    cache: mysqlCache.default({}),
    fanout: z.array(mysqlFanout).default([]),
    xa: mysqlXa.default({}),
  })
  .strict();
