// The error registry of mysql-edge and its one translator into MySQL ERR packets (errno + SQLSTATE).
import { randomBytes } from 'node:crypto';
import type { Logger } from '@dbproxy/observability';
import { createError, DbproxyError } from '@dbproxy/util';

export const MysqlEdgeErrors = {
  accessDenied: createError<[string, string, string]>('DBP_ERR_MYSQLEDGE_ACCESS_DENIED', "Access denied for user '%s'@'%s' (using password: %s)"),
  tlsRequired: createError('DBP_ERR_MYSQLEDGE_TLS_REQUIRED', 'Connections using insecure transport are prohibited (proxy.tls.mode = "required")'),
  handshake: createError<[string]>('DBP_ERR_MYSQLEDGE_HANDSHAKE', 'Bad handshake: %s'),
  passthroughClient: createError('DBP_ERR_MYSQLEDGE_PASSTHROUGH_CLIENT', 'Client does not support authentication protocol requested by server (mysql.auth = "passthrough" needs CLIENT_PLUGIN_AUTH); consider upgrading the client'),
  passthroughChangeUser: createError('DBP_ERR_MYSQLEDGE_PASSTHROUGH_CHANGE_USER', 'COM_CHANGE_USER is not supported with mysql.auth = "passthrough" (the backend checks passwords against its own scramble): reconnect as the other user'),
  loginTimeout: createError<[number]>('DBP_ERR_MYSQLEDGE_LOGIN_TIMEOUT', 'login did not complete within %d s'),
  tooManyConnections: createError<[number]>('DBP_ERR_MYSQLEDGE_TOO_MANY_CONNECTIONS', 'Too many connections (mysql.max_connections = %d)'),
  shuttingDown: createError('DBP_ERR_MYSQLEDGE_SHUTTING_DOWN', 'Server shutdown in progress'),
  unknownCommand: createError<[string]>('DBP_ERR_MYSQLEDGE_UNKNOWN_COMMAND', 'Unknown command 0x%s: dbproxy does not serve it'),
  multiStatement: createError('DBP_ERR_MYSQLEDGE_MULTI_STATEMENT', 'Multi-statement requests are not supported (mysql.multi_statements = "reject"); send one statement per query'),
  multiStatementNotRequested: createError('DBP_ERR_MYSQLEDGE_MULTI_STATEMENT_NOT_REQUESTED', 'Several statements in one query need the client to enable multi-statements (CLIENT_MULTI_STATEMENTS)'),
  readOnly: createError<[string]>('DBP_ERR_MYSQLEDGE_READ_ONLY', 'The read-only listener runs only reads a replica may serve, not %s; use the read-write listener'),
  noBackend: createError<[string, string, string]>('DBP_ERR_MYSQLEDGE_NO_BACKEND', 'No usable %s backend for shard "%s": %s'),
  backendConnect: createError<[string, string]>('DBP_ERR_MYSQLEDGE_BACKEND_CONNECT', 'Cannot connect to backend %s: %s'),
  backendAuth: createError<[string, string]>('DBP_ERR_MYSQLEDGE_BACKEND_AUTH', 'Backend %s refused the pool connection: %s'),
  backendLost: createError<[string, string]>('DBP_ERR_MYSQLEDGE_BACKEND_LOST', 'Lost connection to backend %s during query (%s)'),
  backendProtocol: createError<[string, string]>('DBP_ERR_MYSQLEDGE_BACKEND_PROTOCOL', 'Backend %s sent an unexpected response: %s'),
  pinLost: createError<[string, string]>(
    'DBP_ERR_MYSQLEDGE_PIN_LOST',
    'The backend connection holding this session (%s) was lost (%s); its transaction or session state is gone: reconnect',
  ),
  queryTimeout: createError<[number]>('DBP_ERR_MYSQLEDGE_QUERY_TIMEOUT', 'Query execution was interrupted (mysql.query_timeout_seconds = %d exceeded)'),
  resultTooLarge: createError<[number]>('DBP_ERR_MYSQLEDGE_RESULT_TOO_LARGE', 'The result exceeds mysql.max_result_bytes = %d; add a LIMIT or raise the limit'),
  unknownStatement: createError<[number, string]>('DBP_ERR_MYSQLEDGE_UNKNOWN_STATEMENT', 'Unknown prepared statement handler (%d) given to %s'),
  tooManyStatements: createError<[number]>(
    'DBP_ERR_MYSQLEDGE_TOO_MANY_STATEMENTS',
    "Can't create more than max_prepared_statements statements in one session (current value: %d)",
  ),
  statementMemory: createError<[number]>('DBP_ERR_MYSQLEDGE_STATEMENT_MEMORY', 'Prepared statements of this session exceed mysql.max_prepared_statement_bytes = %d'),
  noCursor: createError<[number]>('DBP_ERR_MYSQLEDGE_NO_CURSOR', 'The statement (%d) has no open cursor'),
  missingTypes: createError<[number]>('DBP_ERR_MYSQLEDGE_MISSING_TYPES', 'Incorrect arguments to mysqld_stmt_execute: statement %d was never bound with parameter types'),
  shardUnsupported: createError<[string]>('DBP_ERR_MYSQLEDGE_SHARD_UNSUPPORTED', 'Statement cannot be routed: %s'),
  fanoutMultiStatement: createError<[string]>('DBP_ERR_MYSQLEDGE_FANOUT_MULTI_STATEMENT', 'A statement on the table of fanout "%s" must be sent alone, not in a multi-statement request'),
  fanoutAmbiguous: createError<[string]>(
    'DBP_ERR_MYSQLEDGE_FANOUT_AMBIGUOUS',
    'A multi-table UPDATE or DELETE naming fanout table %s cannot be copied safely (dbproxy cannot tell whether it writes that table): write the table in a statement of its own',
  ),
  fanoutTransactionTooLarge: createError<[number]>(
    'DBP_ERR_MYSQLEDGE_FANOUT_TRANSACTION_TOO_LARGE',
    'Multi-statement transaction required more than mysql.fanout max_transaction_bytes = %d bytes of fanout copies; commit or roll back',
  ),
  xaAborted: createError<[string, string]>('DBP_ERR_MYSQLEDGE_XA_ABORTED', 'XA fanout statement rolled back on every shard (xid %s): %s'),
  xaUnavailable: createError<[string]>('DBP_ERR_MYSQLEDGE_XA_UNAVAILABLE', 'XA fanout statement not run: %s'),
  xaNoAnswer: createError<[string]>(
    'DBP_ERR_MYSQLEDGE_XA_NO_ANSWER',
    'XA fanout statement: %s; the coordinator journal decides the outcome (committed everywhere only if the commit decision was journalled, else rolled back by recovery): check GET /xa on the xa-coordinator',
  ),
  xaTransaction: createError<[string]>(
    'DBP_ERR_MYSQLEDGE_XA_TRANSACTION',
    'A statement on the table of XA fanout "%s" runs as its own XA transaction and cannot join this transaction (autocommit = 0 or BEGIN): COMMIT or ROLLBACK first and send it with autocommit',
  ),
  xaUnsupported: createError<[string, string]>('DBP_ERR_MYSQLEDGE_XA_UNSUPPORTED', 'A statement on the table of XA fanout "%s" cannot be sent: %s'),
  shardKeysSpread: createError<[string, string]>(
    'DBP_ERR_MYSQLEDGE_SHARD_KEYS_SPREAD',
    'Statement on sharded table %s has keys on several shards (%s); send one statement per shard',
  ),
  shardJoin: createError<[string]>(
    'DBP_ERR_MYSQLEDGE_SHARD_JOIN',
    'Join of sharded tables %s is not on one shard: join them on their shard keys and give one key value',
  ),
  shardMerge: createError<[string, string]>(
    'DBP_ERR_MYSQLEDGE_SHARD_MERGE',
    'Read of sharded table %s without a shard key runs on every shard, which cannot merge %s; add the shard key to the WHERE clause',
  ),
  shardTransaction: createError<[string, string]>(
    'DBP_ERR_MYSQLEDGE_SHARD_TRANSACTION',
    'Statement routes to shard %s but this transaction (or pinned session) runs on shard %s; ROLLBACK or COMMIT first, then run it in its own transaction',
  ),
  shardDenied: createError<[string, string]>('DBP_ERR_MYSQLEDGE_SHARD_DENIED', "Access denied for user '%s' to shard '%s' (users.shards)"),
  noRoute: createError<[string]>('DBP_ERR_MYSQLEDGE_NO_ROUTE', "Unknown database '%s' (no [[mysql.routes]] entry matches it and no mysql.route_default is set)"),
  protocol: createError<[string]>('DBP_ERR_MYSQLEDGE_PROTOCOL', 'Malformed packet: %s'),
  killDenied: createError<[number]>('DBP_ERR_MYSQLEDGE_KILL_DENIED', 'You are not owner of thread %d'),
  killUnsupported: createError<[string]>('DBP_ERR_MYSQLEDGE_KILL_UNSUPPORTED', '%s is not supported by dbproxy: use KILL [QUERY | CONNECTION] <connection id of your session>'),
  killPrepared: createError('DBP_ERR_MYSQLEDGE_KILL_PREPARED', 'This command is not supported in the prepared statement protocol yet'),
  queryInterrupted: createError('DBP_ERR_MYSQLEDGE_QUERY_INTERRUPTED', 'Query execution was interrupted'),
  connectionKilled: createError('DBP_ERR_MYSQLEDGE_CONNECTION_KILLED', 'Connection was killed'),
  adminKilled: createError<[string]>('DBP_ERR_MYSQLEDGE_ADMIN_KILLED', 'Connection was killed by an administrator: %s'),
  pauseTimeout: createError<[number]>('DBP_ERR_MYSQLEDGE_PAUSE_TIMEOUT', 'Query execution was interrupted: the proxy is paused by an administrator and the statement waited %d s (proxy.pause_timeout_seconds)'),
  internal: createError<[string]>('DBP_ERR_MYSQLEDGE_INTERNAL', 'dbproxy internal error (incident %s in the edge log)'),
  illegalTransition: createError<[string, string, string, string]>('DBP_ERR_MYSQLEDGE_ILLEGAL_TRANSITION', '%s cannot go from %s to %s (%s)'),
} as const;

/** What goes into an ERR packet. */
export interface MysqlError {
  readonly code: number;
  readonly sqlState: string;
  readonly message: string;
}

/**
 * errno and SQLSTATE for each code, from the MariaDB/MySQL server error reference. Never a
 * client-library code (2000-2999): libmariadb reads an ERR carrying one as a malformed packet.
 */
const WIRE: Readonly<Record<string, readonly [number, string]>> = {
  DBP_ERR_MYSQLEDGE_ACCESS_DENIED: [1045, '28000'], // ER_ACCESS_DENIED_ERROR
  DBP_ERR_MYSQLEDGE_TLS_REQUIRED: [3159, 'HY000'], // ER_SECURE_TRANSPORT_REQUIRED
  DBP_ERR_MYSQLEDGE_HANDSHAKE: [1043, '08S01'], // ER_HANDSHAKE_ERROR
  DBP_ERR_MYSQLEDGE_PASSTHROUGH_CLIENT: [1251, '08004'], // ER_NOT_SUPPORTED_AUTH_MODE
  DBP_ERR_MYSQLEDGE_PASSTHROUGH_CHANGE_USER: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_LOGIN_TIMEOUT: [1043, '08S01'], // ER_HANDSHAKE_ERROR
  DBP_ERR_MYSQLEDGE_TOO_MANY_CONNECTIONS: [1040, '08004'], // ER_CON_COUNT_ERROR
  DBP_ERR_MYSQLEDGE_SHUTTING_DOWN: [1053, '08S01'], // ER_SERVER_SHUTDOWN
  DBP_ERR_MYSQLEDGE_UNKNOWN_COMMAND: [1047, '08S01'], // ER_UNKNOWN_COM_ERROR
  DBP_ERR_MYSQLEDGE_MULTI_STATEMENT: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_MULTI_STATEMENT_NOT_REQUESTED: [1064, '42000'], // ER_PARSE_ERROR, what the server answers such a client
  DBP_ERR_MYSQLEDGE_READ_ONLY: [1290, 'HY000'], // ER_OPTION_PREVENTS_STATEMENT
  DBP_ERR_MYSQLEDGE_NO_BACKEND: [1429, 'HY000'], // ER_CONNECT_TO_FOREIGN_DATA_SOURCE
  DBP_ERR_MYSQLEDGE_BACKEND_CONNECT: [1429, 'HY000'], // ER_CONNECT_TO_FOREIGN_DATA_SOURCE
  DBP_ERR_MYSQLEDGE_BACKEND_AUTH: [1045, '28000'], // ER_ACCESS_DENIED_ERROR (the pool's credentials)
  DBP_ERR_MYSQLEDGE_BACKEND_LOST: [1158, '08S01'], // ER_NET_READ_ERROR
  DBP_ERR_MYSQLEDGE_BACKEND_PROTOCOL: [1158, '08S01'], // ER_NET_READ_ERROR
  DBP_ERR_MYSQLEDGE_PIN_LOST: [1927, '70100'], // ER_CONNECTION_KILLED
  DBP_ERR_MYSQLEDGE_QUERY_TIMEOUT: [1969, '70100'], // ER_STATEMENT_TIMEOUT
  DBP_ERR_MYSQLEDGE_RESULT_TOO_LARGE: [1104, '42000'], // ER_TOO_BIG_SELECT
  DBP_ERR_MYSQLEDGE_UNKNOWN_STATEMENT: [1243, 'HY000'], // ER_UNKNOWN_STMT_HANDLER
  DBP_ERR_MYSQLEDGE_TOO_MANY_STATEMENTS: [1461, '42000'], // ER_MAX_PREPARED_STMT_COUNT_REACHED
  DBP_ERR_MYSQLEDGE_STATEMENT_MEMORY: [1041, 'HY000'], // ER_OUT_OF_RESOURCES
  DBP_ERR_MYSQLEDGE_NO_CURSOR: [1421, 'HY000'], // ER_STMT_HAS_NO_OPEN_CURSOR
  DBP_ERR_MYSQLEDGE_MISSING_TYPES: [1210, 'HY000'], // ER_WRONG_ARGUMENTS
  DBP_ERR_MYSQLEDGE_SHARD_UNSUPPORTED: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_FANOUT_MULTI_STATEMENT: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_FANOUT_AMBIGUOUS: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_FANOUT_TRANSACTION_TOO_LARGE: [1197, 'HY000'], // ER_TRANS_CACHE_FULL
  DBP_ERR_MYSQLEDGE_XA_ABORTED: [1402, 'XA100'], // ER_XA_RBROLLBACK
  DBP_ERR_MYSQLEDGE_XA_UNAVAILABLE: [1429, 'HY000'], // ER_CONNECT_TO_FOREIGN_DATA_SOURCE
  DBP_ERR_MYSQLEDGE_XA_NO_ANSWER: [1180, 'HY000'], // ER_ERROR_DURING_COMMIT
  DBP_ERR_MYSQLEDGE_XA_TRANSACTION: [1399, 'XAE07'], // ER_XAER_RMFAIL
  DBP_ERR_MYSQLEDGE_XA_UNSUPPORTED: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_PROTOCOL: [1047, '08S01'], // ER_UNKNOWN_COM_ERROR
  DBP_ERR_MYSQLEDGE_SHARD_KEYS_SPREAD: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_SHARD_JOIN: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_SHARD_MERGE: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_SHARD_TRANSACTION: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_SHARD_DENIED: [1044, '42000'], // ER_DBACCESS_DENIED_ERROR
  DBP_ERR_MYSQLEDGE_NO_ROUTE: [1049, '42000'], // ER_BAD_DB_ERROR
  DBP_ERR_MYSQLEDGE_KILL_DENIED: [1095, 'HY000'], // ER_KILL_DENIED_ERROR
  DBP_ERR_MYSQLEDGE_KILL_UNSUPPORTED: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_MYSQLEDGE_KILL_PREPARED: [1295, 'HY000'], // ER_UNSUPPORTED_PS
  DBP_ERR_MYSQLEDGE_QUERY_INTERRUPTED: [1317, '70100'], // ER_QUERY_INTERRUPTED
  DBP_ERR_MYSQLEDGE_CONNECTION_KILLED: [1927, '70100'], // ER_CONNECTION_KILLED
  DBP_ERR_MYSQLEDGE_ADMIN_KILLED: [1927, '70100'], // ER_CONNECTION_KILLED
  DBP_ERR_MYSQLEDGE_PAUSE_TIMEOUT: [1969, '70100'], // ER_STATEMENT_TIMEOUT
  DBP_ERR_MYSQLEDGE_ILLEGAL_TRANSITION: [1105, 'HY000'], // ER_UNKNOWN_ERROR (a bug)
  DBP_ERR_MYSQLEDGE_INTERNAL: [1105, 'HY000'], // ER_UNKNOWN_ERROR (a bug)
  // Errors of the libraries underneath (their READMEs suggest these).
  // libs/sql's shard refusals (each message names the table and the reason)
  DBP_ERR_SQL_SHARD_KEY_MISSING: [1235, '42000'], // ER_NOT_SUPPORTED_YET
  DBP_ERR_SQL_SHARD_MULTI: [1235, '42000'],
  DBP_ERR_SQL_SHARD_KEY_ASSIGNED: [1235, '42000'],
  DBP_ERR_SQL_SHARD_KEY_UNMAPPED: [1235, '42000'],
  DBP_ERR_SQL_SHARD_KEY_INVALID: [1235, '42000'],
  DBP_ERR_SQL_SHARD_KEY_UNBOUND: [1235, '42000'],
  DBP_ERR_SQL_SHARD_UNSUPPORTED: [1235, '42000'],
  DBP_ERR_SQL_SHARD_HINT_UNKNOWN: [1235, '42000'],
  DBP_ERR_SQL_SHARD_HINT_CONFLICT: [1235, '42000'],
  DBP_ERR_MYSQL_PACKET_TOO_LARGE: [1153, '08S01'], // ER_NET_PACKET_TOO_LARGE
  DBP_ERR_MYSQL_PACKET_TRUNCATED: [1047, '08S01'],
  DBP_ERR_MYSQL_MALFORMED_PACKET: [1047, '08S01'],
  DBP_ERR_MYSQL_SEQUENCE_MISMATCH: [1156, '08S01'], // ER_NET_PACKETS_OUT_OF_ORDER
  DBP_ERR_MYSQL_UNEXPECTED_PACKET: [1047, '08S01'],
  DBP_ERR_MYSQL_UNKNOWN_COMMAND: [1047, '08S01'],
  DBP_ERR_MYSQL_UNSUPPORTED: [1235, '42000'],
  DBP_ERR_MYSQL_UNSUPPORTED_TYPE: [1210, 'HY000'], // ER_WRONG_ARGUMENTS
  DBP_ERR_MYSQL_AUTH_PROTOCOL: [1043, '08S01'],
  DBP_ERR_POOL_ACQUIRE_TIMEOUT: [1040, '08004'],
  DBP_ERR_POOL_QUEUE_FULL: [1040, '08004'],
  DBP_ERR_POOL_CLOSED: [1053, '08S01'],
  DBP_ERR_POOL_CREATE_FAILED: [1429, 'HY000'],
  DBP_ERR_POOL_UNKNOWN_BACKEND: [1429, 'HY000'],
};

/** The SQL library's shard refusals share one client error until sharding lands in the edge. */
const SQL_SHARD_PREFIX = 'DBP_ERR_SQL_SHARD_';

/** What a client gets for an error the edge did not define (never its text: that may be any exception's). */
const UNDEFINED_ERROR: MysqlError = { code: 1105, sqlState: 'HY000', message: 'dbproxy internal error (details in the edge log)' };

/**
 * An exception that is not one of the edge's errors (a bug): logged with its stack under an
 * incident id, and replaced by DBP_ERR_MYSQLEDGE_INTERNAL carrying only that id, so the client never
 * sees exception text. The edge's own errors are returned as they are.
 */
export function reportInternal(err: unknown, logger: Logger, where: Record<string, unknown>): DbproxyError {
  if (err instanceof DbproxyError) return err;
  const incident = randomBytes(4).toString('hex');
  logger.error({ ...where, incident, err }, 'mysql-edge internal error');
  return MysqlEdgeErrors.internal.withCause(err, incident);
}

/** The one translator: any error the edge meets, as the ERR packet the client gets. */
export function toMysqlError(err: unknown): MysqlError {
  if (err instanceof DbproxyError) {
    const wire = WIRE[err.code] ?? (err.code.startsWith(SQL_SHARD_PREFIX) ? ([1235, '42000'] as const) : undefined);
    if (wire) return { code: wire[0], sqlState: wire[1], message: UNAVAILABLE.has(err.code) ? unavailable(err) : err.message };
  }
  return UNDEFINED_ERROR;
}

/**
 * Failures to open a backend connection: their message carries the OS error and the backend's
 * address (for the edge log), so the client reads only this stable text naming the backend.
 */
const UNAVAILABLE: ReadonlySet<string> = new Set(['DBP_ERR_MYSQLEDGE_BACKEND_CONNECT', 'DBP_ERR_POOL_CREATE_FAILED']);

function unavailable(err: DbproxyError): string {
  return `Cannot connect to backend ${String(err.args[0])}: it is unavailable (details in the edge log)`;
}

/** The errno a code maps to (for metrics labels); 1105 when unmapped. */
export function errnoOf(code: string): number {
  return WIRE[code]?.[0] ?? 1105;
}
