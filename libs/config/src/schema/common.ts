// Building blocks shared by every configuration section: addresses, durations, TLS, shard maps.
import { z } from 'zod';

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+|\*):(\d{1,5})$/;

/** `host:port` with a port in 1..65535 (`[::1]:6033` for IPv6). */
export const address = z
  .string({ invalid_type_error: 'expected host:port' })
  .refine((v) => {
    const m = HOST_PORT.exec(v);
    if (!m) return false;
    const port = Number(m[2]);
    return port >= 1 && port <= 65535;
  }, 'expected host:port');

/** `host:port`, or `host:0` for an ephemeral port (tests) — listeners only. */
export const listenAddress = z
  .string({ invalid_type_error: 'expected host:port' })
  .refine((v) => {
    const m = HOST_PORT.exec(v);
    return m !== null && Number(m[2]) <= 65535;
  }, 'expected host:port');

export const positiveSeconds = z.number({ invalid_type_error: 'expected a number of seconds' }).positive('must be greater than 0');
export const nonNegativeSeconds = z.number({ invalid_type_error: 'expected a number of seconds' }).nonnegative('must be 0 or more');
export const positiveInt = z.number({ invalid_type_error: 'expected an integer' }).int('expected an integer').positive('must be at least 1');
export const nonNegativeInt = z.number({ invalid_type_error: 'expected an integer' }).int('expected an integer').nonnegative('must be 0 or more');
export const name = z
  .string({ invalid_type_error: 'expected a name' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, 'expected a name of letters, digits, "_", "." or "-" (at most 63)');

export const role = z.enum(['primary', 'replica'], { errorMap: () => ({ message: 'expected "primary" or "replica"' }) });

/** TLS towards a backend: verify chain and hostname; private CA and client certificates. */
export const backendTls = z
  .object({
    enabled: z.boolean().default(false),
    use_webpki_roots: z.boolean().default(true),
    ca_path: z.string().optional(),
    client_cert_path: z.string().optional(),
    client_key_path: z.string().optional(),
    server_name: z.string().optional(),
  })
  .strict();

/** An integer key bound: a TOML integer, or a decimal string for values beyond 2^53. */
const keyBound = z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'expected an integer or a decimal string')]).transform((v) => BigInt(v));

export const shardRange = z
  .object({ from: keyBound.optional(), to: keyBound.optional(), shard: name })
  .strict()
  .refine((r) => r.from === undefined || r.to === undefined || r.from < r.to, 'range must have from < to');

/** How a key value maps to a shard (libs/routing ShardMapSpec): hash, half-open ranges or exact values. */
export const shardMap = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('hash'), shards: z.array(name).min(1, 'needs at least one shard') }).strict(),
    z.object({ kind: z.literal('range'), ranges: z.array(shardRange).min(1, 'needs at least one range') }).strict(),
    z
      .object({
        kind: z.literal('value'),
        values: z.record(z.string(), name),
        default_shard: name.optional(),
      })
      .strict(),
  ],
  { errorMap: () => ({ message: 'expected kind = "hash", "range" or "value"' }) },
);

export type ShardMapConfig = z.infer<typeof shardMap>;

/** Names of the shards a shard map can produce. */
export function shardsOfMap(map: ShardMapConfig): string[] {
  switch (map.kind) {
    case 'hash':
      return map.shards;
    case 'range':
      return map.ranges.map((r) => r.shard);
    case 'value':
      return [...Object.values(map.values), ...(map.default_shard ? [map.default_shard] : [])];
  }
}

/**
 * [mysql] / [postgres] pipeline_depth: "auto" (the default) pipelines autocommit replica-safe reads
 * on lent connections only while units wait for the pool, at a depth that follows the waiters
 * (min(16, 1 + ceil(waiters / pool size))); N fixes the depth; 1 turns pipelining off.
 */
export const pipelineDepth = z
  .union([z.literal('auto'), z.number().int().min(1).max(64)], { errorMap: () => ({ message: 'pipeline_depth must be "auto" or an integer from 1 to 64' }) })
  .default('auto');
