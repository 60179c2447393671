// [redis] with [redis.sharding] and [redis.cluster].
import { z } from 'zod';
import { address, listenAddress, name, nonNegativeSeconds, nonNegativeInt, positiveInt, positiveSeconds, shardMap } from './common';

export const redisSharding = z
  .object({
    /** A connection-mode client that sends no DBPROXY.SHARD: use default_shard, or refuse it. */
    missing: z.enum(['default', 'refuse']).default('default'),
    default_shard: name.default('default'),
    map: shardMap.optional(),
  })
  .strict();

export const redisCluster = z
  .object({
    enabled: z.boolean().default(false),
    seeds: z.array(address).default([]),
    username: z.string().optional(),
    password: z.string().optional(),
  })
  .strict()
  .refine((c) => !c.enabled || c.seeds.length > 0, { message: 'seeds must list at least one node when enabled', path: ['seeds'] });

/** [redis.cache]: command mode's GET/MGET reply cache kept coherent by RESP3 client tracking (spec 002). */
export const redisCache = z
  .object({
    enabled: z.boolean().default(false),
    /** Budget of cached replies per process, split between the two generations. */
    max_bytes: positiveInt.default(67_108_864),
    /** An entry older than this is not served (a backstop; coherence comes from tracking). */
    max_age_seconds: positiveSeconds.default(300),
    /** strict: a hit is served after a PING on its master's tracking connection (reads after a write's reply see it); bounded: at once (up to the invalidation's delivery time stale). */
    consistency: z.enum(['strict', 'bounded']).default('strict'),
  })
  .strict();

export const redisSection = z
  .object({
    enabled: z.boolean().default(false),
    mode: z.enum(['connection', 'command']).default('connection'),
    read_write_listen: listenAddress.default('0.0.0.0:6380'),
    read_only_listen: listenAddress.default('0.0.0.0:6381'),
    max_connections: positiveInt.default(10000),
    workers: nonNegativeInt.default(0),
    connect_timeout_seconds: positiveSeconds.default(5),
    command_timeout_seconds: positiveSeconds.default(30),
    max_outstanding_replies: positiveInt.default(65536),
    query_buffer_limit_bytes: positiveInt.default(1073741824),
    max_bulk_bytes: positiveInt.default(536870912),
    max_reply_depth: positiveInt.max(100_000).default(10_000),
    max_blocking_leases_per_node: positiveInt.default(512),
    max_subscriptions: positiveInt.default(32768),
    client_output_limit_bytes: positiveInt.default(8388608),
    max_pending_pushes: positiveInt.default(4096),
    cross_shard_writes: z.boolean().default(false),
    fallback_to_primary: z.boolean().default(true),
    max_replica_lag_seconds: nonNegativeSeconds.default(30),
    pressure_margin: z.number().min(0).max(10).default(0.25),
    sharding: redisSharding.default({}),
    cluster: redisCluster.default({}),
    cache: redisCache.default({}),
  })
  .strict();
