// Errors of libs/sql: tokenizer failures, router options, and every reason a statement is refused.
import { createError } from '@dbproxy/util';

/** A string, quoted identifier, comment or dollar quote runs to the end of the input. */
export const UnterminatedToken = createError<[string, number]>(
  'DBP_ERR_SQL_UNTERMINATED',
  'unterminated %s starting at offset %d',
);

/** SqlRouter options are invalid. */
export const InvalidRouterOptions = createError<[string]>('DBP_ERR_SQL_INVALID_OPTIONS', 'invalid SQL router options: %s');

/** The statement is empty (only whitespace, comments or semicolons). */
export const EmptyStatement = createError('DBP_ERR_SQL_EMPTY', 'the statement is empty');

/** A statement on a sharded table does not constrain the shard column. */
export const ShardKeyMissing = createError<[string, string, string]>(
  'DBP_ERR_SQL_SHARD_KEY_MISSING',
  'statement on sharded table %s has no value for shard column %s: %s',
);

/** The shard key spans shards in a way that is not a finite key set (OR, range), and multi_shard = reject. */
export const MultiShardRejected = createError<[string, string]>(
  'DBP_ERR_SQL_SHARD_MULTI',
  'statement on sharded table %s would run on every shard (%s) and multi_shard is "reject"; constrain the shard column with = or IN',
);

/** The statement assigns the shard column, which would move a row between shards. */
export const ShardKeyAssigned = createError<[string, string]>(
  'DBP_ERR_SQL_SHARD_KEY_ASSIGNED',
  'statement assigns shard column %s of sharded table %s; rows cannot move between shards: delete and re-insert instead',
);

/** A shard-key value maps to no shard. */
export const ShardKeyUnmapped = createError<[string, string]>(
  'DBP_ERR_SQL_SHARD_KEY_UNMAPPED',
  'shard key %s of table %s maps to no shard; check the shard map ranges/values',
);

/** A shard-key value cannot be used as a key (NULL, fractional, boolean, binary...). */
export const ShardKeyInvalid = createError<[string, string]>(
  'DBP_ERR_SQL_SHARD_KEY_INVALID',
  'shard key value for %s is not usable: %s',
);

/** A shard key is a placeholder but no value was bound for it. */
export const ShardKeyUnbound = createError<[string, number]>(
  'DBP_ERR_SQL_SHARD_KEY_UNBOUND',
  'shard key %s is parameter %d, which has no bound value; execute it as a prepared statement with parameters',
);

/** The statement's shape or family cannot be routed to shards. */
export const ShardRoutingUnsupported = createError<[string]>(
  'DBP_ERR_SQL_SHARD_UNSUPPORTED',
  'cannot route this statement by shard key: %s',
);

/** A routing hint names a shard that no shard rule maps to. */
export const UnknownShardHint = createError<[string]>(
  'DBP_ERR_SQL_SHARD_HINT_UNKNOWN',
  'routing hint names shard %s, which no shard rule uses',
);

/** A routing hint contradicts the shard the key selects. */
export const ShardHintConflict = createError<[string, string]>(
  'DBP_ERR_SQL_SHARD_HINT_CONFLICT',
  'routing hint names shard %s but the shard key selects %s',
);
