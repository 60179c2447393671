// Errors of libs/routing: invalid shard-map specs, keys that cannot be placed, bad selector input.
import { createError } from '@dbproxy/util';

/** A shard-map spec is unusable (no shards, an empty range, a blank shard name...). */
export const InvalidShardMapSpec = createError<[string]>('DBP_ERR_ROUTING_INVALID_SPEC', 'invalid shard map: %s');

/** Two ranges of a range map cover the same key. */
export const OverlappingRanges = createError<[string, string]>(
  'DBP_ERR_ROUTING_RANGE_OVERLAP',
  'invalid shard map: range %s overlaps range %s',
);

/** A key cannot be placed exactly (a fractional or imprecise number). */
export const InvalidShardKey = createError<[string]>('DBP_ERR_ROUTING_INVALID_KEY', 'invalid shard key: %s');

/** A replica candidate or selector option is out of range. */
export const InvalidReplicaCandidate = createError<[string]>(
  'DBP_ERR_ROUTING_INVALID_CANDIDATE',
  'invalid replica candidate: %s',
);

/** A read-after-write window length is negative or not a number. */
export const InvalidWindow = createError<[string]>('DBP_ERR_ROUTING_INVALID_WINDOW', 'invalid read-after-write window: %s');
