// [postgres] (keys as in spec 003) with [postgres.sharding].
import { z } from 'zod';
import { listenAddress, name, nonNegativeInt, nonNegativeSeconds, pipelineDepth, positiveInt, positiveSeconds, shardMap } from './common';
import { shardRule } from './mysql';
import { handshakeRoute } from './routes';

export const postgresSharding = z
  .object({
    enabled: z.boolean().default(false),
    /** Startup parameter (or `-c <name>=` inside `options`) that carries the shard key. */
    parameter: z.string().regex(/^[a-z_][a-z0-9_.]*$/).default('dbproxy.shard'),
    /** A connection without the parameter: use default_shard, or refuse it. */
    missing: z.enum(['default', 'refuse']).default('refuse'),
    default_shard: name.default('default'),
    map: shardMap.optional(),
    /**
     * Statement-level sharding (transaction mode only): each rule names a sharded table, its shard
     * column and map, as in [[mysql.sharding.rules]]. Not combined with `enabled` (the startup choice).
     */
    rules: z.array(shardRule).default([]),
    /** A read whose keys span shards or cannot be pinned to one: run on every shard, or reject. */
    multi_shard: z.enum(['all_shards', 'reject']).default('reject'),
  })
  .strict();

export const postgresSection = z
  .object({
    enabled: z.boolean().default(false),
    routing_mode: z.enum(['transparent', 'transaction']).default('transparent'),
    read_write_listen: listenAddress.default('0.0.0.0:6432'),
    read_only_listen: listenAddress.default('0.0.0.0:6433'),
    max_connections: positiveInt.default(4096),
    workers: nonNegativeInt.default(0),
    connect_timeout_seconds: positiveSeconds.default(5),
    query_timeout_seconds: positiveSeconds.default(30),
    pool_acquire_timeout_seconds: positiveSeconds.default(5),
    pool_max_per_backend: positiveInt.default(32),
    read_after_write_seconds: nonNegativeSeconds.default(2),
    /**
     * Transaction mode: "window" (read_after_write_seconds) or "causal": after a unit that wrote
     * commits, reads run on a replica whose replayed LSN reached the primary's WAL position at the
     * commit (polled up to causal_wait_ms), else on the primary.
     */
    read_consistency: z.enum(['window', 'causal']).default('window'),
    causal_wait_ms: z.number().int().min(0).max(60000).default(200),
    max_result_rows: positiveInt.default(100000),
    max_result_bytes: positiveInt.default(67108864),
    /** Transaction mode: result bytes all sessions of one process may hold at once (each session's own bound is max_result_bytes). */
    max_buffered_result_bytes: positiveInt.default(536870912),
    fallback_to_primary: z.boolean().default(true),
    max_replica_lag_seconds: nonNegativeSeconds.default(30),
    max_message_bytes: positiveInt.default(67108864),
    /** Per client session, and (transaction mode) per pooled connection: statements prepared there, least recently used closed first. */
    max_prepared_statements: positiveInt.default(1024),
    /** Transaction mode: startup parameters (or `options` -c names) accepted and ignored instead of refused. */
    ignore_startup_parameters: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/)).default([]),
    classification_cache_size: positiveInt.default(10000),
    /** Transaction mode: user-defined functions (`name` or `schema.name`) a read may call and still run on a replica. */
    allowed_functions: z.array(z.string().min(1)).default([]),
    /** Bound on node-sql-parser's work per new statement shape (SqlRouter maxParseTokens); longer statements are not parsed. */
    max_parse_tokens: positiveInt.default(200),
    pressure_margin: z.number().min(0).max(10).default(0.25),
    /**
     * Transaction mode: when every pooled connection of a backend is lent, a single-statement
     * replica-safe read may be queued behind the reads already running on one of them, up to this
     * many per lending of the connection (1 = never; each waits for a connection of its own).
     */
    pipeline_depth: pipelineDepth,
    sharding: postgresSharding.default({}),
    /** Handshake routes: the first whose database/user match the StartupMessage picks the session's shard. */
    routes: z.array(handshakeRoute).default([]),
    /** With routes: the shard of a startup no route matches; absent: such a startup is refused (3D000). */
    route_default: name.optional(),
  })
  .strict();
