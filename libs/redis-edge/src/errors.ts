// The error registry of redis-edge and its one translator into Redis error replies (-ERR, -TRYAGAIN, ...).
import { Buffer } from 'node:buffer';
import type { Logger } from '@dbproxy/observability';
import { createError, DbproxyError } from '@dbproxy/util';

export const RedisEdgeErrors = {
  shardMissing: createError('DBP_ERR_REDISEDGE_SHARD_MISSING', 'DBPROXY.SHARD <value> must be the first command on this proxy (redis.sharding.missing = "refuse")'),
  shardArguments: createError('DBP_ERR_REDISEDGE_SHARD_ARGUMENTS', "wrong number of arguments for 'dbproxy.shard' command"),
  shardUnmapped: createError<[string]>('DBP_ERR_REDISEDGE_SHARD_UNMAPPED', 'shard value "%s" maps to no shard'),
  shardInvalid: createError<[string, string]>('DBP_ERR_REDISEDGE_SHARD_INVALID', 'invalid shard value "%s": %s'),
  noBackend: createError<[string, string]>('DBP_ERR_REDISEDGE_NO_BACKEND', 'no usable %s backend for shard "%s"'),
  backendConnect: createError<[string, string]>('DBP_ERR_REDISEDGE_BACKEND_CONNECT', 'could not connect to backend %s: %s'),
  backendSetup: createError<[string, string]>('DBP_ERR_REDISEDGE_BACKEND_SETUP', 'backend %s refused the connection setup: %s'),
  backendLost: createError<[string, string]>('DBP_ERR_REDISEDGE_BACKEND_LOST', 'connection to backend %s was lost before it replied (%s)'),
  subscriptionsLost: createError<[string, string]>(
    'DBP_ERR_REDISEDGE_SUBSCRIPTIONS_LOST',
    'the pub/sub connection to backend %s (shard "%s") was lost: its subscriptions are gone and messages may have been missed; reconnect and subscribe again',
  ),
  backendTimeout: createError<[string, number]>('DBP_ERR_REDISEDGE_BACKEND_TIMEOUT', 'backend %s did not reply within redis.command_timeout_seconds = %d'),
  backendProtocol: createError<[string, string]>('DBP_ERR_REDISEDGE_BACKEND_PROTOCOL', 'backend %s sent a reply the proxy cannot read: %s'),
  maxClients: createError('DBP_ERR_REDISEDGE_MAX_CLIENTS', 'max number of clients reached'),
  shuttingDown: createError('DBP_ERR_REDISEDGE_SHUTTING_DOWN', 'the proxy is shutting down'),
  adminKilled: createError<[string]>('DBP_ERR_REDISEDGE_ADMIN_KILLED', 'connection closed by an administrator: %s'),
  pauseTimeout: createError<[number]>('DBP_ERR_REDISEDGE_PAUSE_TIMEOUT', 'the proxy is paused by an administrator and the command waited %d s (proxy.pause_timeout_seconds)'),
  readOnly: createError<[string]>('DBP_ERR_REDISEDGE_READ_ONLY', "'%s' writes: it is refused on the read-only listener"),
  readOnlyScript: createError<[string]>('DBP_ERR_REDISEDGE_READ_ONLY_SCRIPT', "'%s' may write: use EVAL_RO, EVALSHA_RO or FCALL_RO on the read-only listener"),
  readOnlyUnknown: createError<[string]>('DBP_ERR_REDISEDGE_READ_ONLY_UNKNOWN', "unknown command '%s' is refused on the read-only listener"),
  unsupported: createError<[string, string]>('DBP_ERR_REDISEDGE_UNSUPPORTED', "'%s' is not supported in command mode: %s"),
  administrative: createError<[string]>('DBP_ERR_REDISEDGE_ADMINISTRATIVE', "'%s' is an administrative command: run it on the server directly or through connection mode"),
  clusterDisabled: createError('DBP_ERR_REDISEDGE_CLUSTER_DISABLED', 'This instance has cluster support disabled'),
  selectInCluster: createError('DBP_ERR_REDISEDGE_SELECT_IN_CLUSTER', 'SELECT is not allowed in cluster mode'),
  crossSlot: createError<[string]>('DBP_ERR_REDISEDGE_CROSS_SLOT', "Keys in request don't hash to the same %s"),
  crossShardWrite: createError<[string]>(
    'DBP_ERR_REDISEDGE_CROSS_SHARD_WRITE',
    "'%s' spans several shards and would not be atomic: enable redis.cross_shard_writes to split it",
  ),
  crossShardMsetnx: createError(
    'DBP_ERR_REDISEDGE_CROSS_SHARD_MSETNX',
    "'MSETNX' spans several shards: split, it would set the keys of some shards while others refuse (use one hash tag)",
  ),
  keysUnknown: createError<[string]>('DBP_ERR_REDISEDGE_KEYS_UNKNOWN', "the key positions of '%s' are not known (COMMAND INFO), so it cannot be routed across shards"),
  keyUnmapped: createError('DBP_ERR_REDISEDGE_KEY_UNMAPPED', 'the key maps to no shard (redis.sharding.map)'),
  wrongArguments: createError<[string]>('DBP_ERR_REDISEDGE_WRONG_ARGUMENTS', "wrong number of arguments for '%s' command"),
  syntax: createError('DBP_ERR_REDISEDGE_SYNTAX', 'syntax error'),
  unknownSubcommand: createError<[string, string]>('DBP_ERR_REDISEDGE_UNKNOWN_SUBCOMMAND', "unknown subcommand '%s'. Try %s HELP."),
  invalidCursor: createError('DBP_ERR_REDISEDGE_INVALID_CURSOR', 'invalid cursor'),
  tooManySubscriptions: createError<[number]>('DBP_ERR_REDISEDGE_TOO_MANY_SUBSCRIPTIONS', 'too many subscriptions in this session (redis.max_subscriptions = %d)'),
  subscribedContext: createError<[string]>(
    'DBP_ERR_REDISEDGE_SUBSCRIBED_CONTEXT',
    "Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
  ),
  leasesExhausted: createError<[string, number]>('DBP_ERR_REDISEDGE_LEASES_EXHAUSTED', 'no blocking connection to %s is free (redis.max_blocking_leases_per_node = %d)'),
  redirectLimit: createError<[number]>('DBP_ERR_REDISEDGE_REDIRECT_LIMIT', 'slot %d kept moving: retry the command'),
  multiNested: createError('DBP_ERR_REDISEDGE_MULTI_NESTED', 'MULTI calls can not be nested'),
  execWithoutMulti: createError('DBP_ERR_REDISEDGE_EXEC_WITHOUT_MULTI', 'EXEC without MULTI'),
  discardWithoutMulti: createError('DBP_ERR_REDISEDGE_DISCARD_WITHOUT_MULTI', 'DISCARD without MULTI'),
  watchInMulti: createError('DBP_ERR_REDISEDGE_WATCH_IN_MULTI', 'WATCH inside MULTI is not allowed'),
  commandInMulti: createError<[string]>('DBP_ERR_REDISEDGE_COMMAND_IN_MULTI', "'%s' is not allowed inside MULTI through the proxy"),
  execAbort: createError('DBP_ERR_REDISEDGE_EXEC_ABORT', 'Transaction discarded because of previous errors.'),
  transactionTooLarge: createError<[number]>('DBP_ERR_REDISEDGE_TRANSACTION_TOO_LARGE', 'the queued transaction exceeds redis.query_buffer_limit_bytes = %d'),
  transactionMoved: createError('DBP_ERR_REDISEDGE_TRANSACTION_MOVED', 'a slot of this transaction is migrating: retry the transaction'),
  watchLost: createError<[string]>('DBP_ERR_REDISEDGE_WATCH_LOST', 'the connection holding this WATCH to %s was lost: the transaction is aborted'),
  commandTable: createError<[string, string]>('DBP_ERR_REDISEDGE_COMMAND_TABLE', 'cannot read COMMAND INFO/DOCS from %s: %s'),
  loading: createError('DBP_ERR_REDISEDGE_LOADING', 'dbproxy is still reading the command table from the backends'),
} as const;

/** Error reply prefixes (the first word a client parses), by error code; ERR otherwise. */
const PREFIX: Readonly<Record<string, string>> = {
  DBP_ERR_REDISEDGE_CROSS_SLOT: 'CROSSSLOT',
  DBP_ERR_REDISEDGE_CROSS_SHARD_WRITE: 'CROSSSLOT',
  DBP_ERR_REDISEDGE_CROSS_SHARD_MSETNX: 'CROSSSLOT',
  DBP_ERR_REDISEDGE_REDIRECT_LIMIT: 'TRYAGAIN',
  DBP_ERR_REDISEDGE_TRANSACTION_MOVED: 'TRYAGAIN',
  DBP_ERR_REDISEDGE_LOADING: 'LOADING',
  DBP_ERR_REDISEDGE_EXEC_ABORT: 'EXECABORT',
};

/** The message without CR/LF, which would end the error line early (Redis does the same). */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}

/** The one translator: any error as the Redis error reply a client receives (`-ERR ...\r\n`). */
export function errorReply(err: unknown): Buffer {
  const prefix = err instanceof DbproxyError ? (PREFIX[err.code] ?? 'ERR') : 'ERR';
  return Buffer.from(`-${prefix} ${oneLine(clientMessage(err))}\r\n`);
}

/** What a client reads for an exception that is not one of dbproxy's errors (a bug, a runtime or OS error). */
export const INTERNAL_ERROR_MESSAGE = 'internal error in the proxy (details in the edge log)';

/**
 * Only dbproxy's own errors keep their text. A connect failure's message carries the OS error and
 * the backend's address (for the edge log): the client reads only a stable text naming the backend.
 */
function clientMessage(err: unknown): string {
  if (!(err instanceof DbproxyError)) return INTERNAL_ERROR_MESSAGE;
  if (RedisEdgeErrors.backendConnect.code === err.code) return `backend ${String(err.args[0])} is unavailable (details in the edge log)`;
  return err.message;
}

/** Logs, with its stack, an exception the client reads only as INTERNAL_ERROR_MESSAGE; dbproxy's own errors are not logged here. */
export function logIfInternal(logger: Logger, err: unknown, where: Record<string, unknown>): void {
  if (!(err instanceof DbproxyError)) logger.error({ ...where, err }, 'redis-edge internal error (the client read only -ERR internal error)');
}

/** The error reply prefix for `err` (for metrics and tests). */
export function errorPrefix(err: unknown): string {
  return err instanceof DbproxyError ? (PREFIX[err.code] ?? 'ERR') : 'ERR';
}
