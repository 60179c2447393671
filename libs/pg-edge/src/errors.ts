// The error registry of pg-edge and its one translator into PostgreSQL ErrorResponses with real SQLSTATEs.
import { pgError, sqlStateForError, type ErrorResponse, type ErrorSeverity } from '@dbproxy/protocol-pg';
import type { Logger } from '@dbproxy/observability';
import { createError, DbproxyError } from '@dbproxy/util';

export const PgEdgeErrors = {
  shardMissing: createError<[string]>('DBP_ERR_PGEDGE_SHARD_MISSING', 'startup parameter "%s" is required: it names the shard'),
  shardUnknown: createError<[string]>('DBP_ERR_PGEDGE_SHARD_UNKNOWN', 'shard value "%s" maps to no shard'),
  noRoute: createError<[string]>('DBP_ERR_PGEDGE_NO_ROUTE', 'database "%s" does not exist (no [[postgres.routes]] entry matches it and no postgres.route_default is set)'),
  shardInvalid: createError<[string]>('DBP_ERR_PGEDGE_SHARD_INVALID', 'invalid shard value "%s"'),
  shardForbidden: createError<[string, string]>('DBP_ERR_PGEDGE_SHARD_FORBIDDEN', 'user "%s" may not use shard "%s"'),
  tlsRequired: createError('DBP_ERR_PGEDGE_TLS_REQUIRED', 'SSL connection is required (proxy.tls.mode = "required")'),
  noBackend: createError<[string, string]>('DBP_ERR_PGEDGE_NO_BACKEND', 'no usable %s backend for shard "%s"'),
  backendConnect: createError<[string, string]>('DBP_ERR_PGEDGE_BACKEND_CONNECT', 'could not connect to backend %s: %s'),
  backendTls: createError<[string, string]>('DBP_ERR_PGEDGE_BACKEND_TLS', 'TLS to backend %s failed: %s'),
  backendAuth: createError<[string, string]>('DBP_ERR_PGEDGE_BACKEND_AUTH', 'backend %s refused the pool connection: %s'),
  backendLost: createError<[string]>('DBP_ERR_PGEDGE_BACKEND_LOST', 'connection to backend %s was lost during the query'),
  sessionPoisoned: createError<[string]>(
    'DBP_ERR_PGEDGE_SESSION_POISONED',
    'the backend connection holding this session\'s %s was lost; its state cannot be replayed: reconnect',
  ),
  tooManyConnections: createError<[number]>('DBP_ERR_PGEDGE_TOO_MANY_CONNECTIONS', 'sorry, too many clients already (max_connections = %d)'),
  shuttingDown: createError('DBP_ERR_PGEDGE_SHUTTING_DOWN', 'the proxy is shutting down'),
  unsupportedType: createError<[number, string]>(
    'DBP_ERR_PGEDGE_UNSUPPORTED_TYPE',
    'type OID %d in a %s is not supported in transaction mode; use transparent mode (routing_mode = "transparent")',
  ),
  unsupportedStatement: createError<[string]>(
    'DBP_ERR_PGEDGE_UNSUPPORTED_STATEMENT',
    '%s is not supported in transaction mode; use transparent mode (routing_mode = "transparent")',
  ),
  resultTooLarge: createError<[string, number]>(
    'DBP_ERR_PGEDGE_RESULT_TOO_LARGE',
    'result exceeds %s = %d; use transparent mode for larger results',
  ),
  readOnly: createError<[string]>('DBP_ERR_PGEDGE_READ_ONLY', 'cannot execute %s on the read-only listener'),
  queryTimeout: createError<[number]>('DBP_ERR_PGEDGE_QUERY_TIMEOUT', 'canceling statement: it exceeded query_timeout_seconds = %d'),
  queryCanceled: createError('DBP_ERR_PGEDGE_QUERY_CANCELED', 'canceling statement due to user request'),
  adminTerminated: createError<[string]>('DBP_ERR_PGEDGE_ADMIN_TERMINATED', 'terminating connection due to administrator command: %s'),
  pauseTimeout: createError<[number]>('DBP_ERR_PGEDGE_PAUSE_TIMEOUT', 'canceling statement: the proxy is paused by an administrator and the statement waited %d s (proxy.pause_timeout_seconds)'),
  acquireTimeout: createError<[string, string]>('DBP_ERR_PGEDGE_ACQUIRE_TIMEOUT', 'no connection to backend %s became free: %s'),
  startupParameter: createError<[string, string]>(
    'DBP_ERR_PGEDGE_STARTUP_PARAMETER',
    'startup parameter %s = "%s" is not supported in transaction mode; use SET (which pins the session) or transparent mode',
  ),
  databaseMismatch: createError<[string, string, string]>(
    'DBP_ERR_PGEDGE_DATABASE_MISMATCH',
    'database "%s" is not served here: shard "%s" serves database "%s"',
  ),
  tooManyStatements: createError<[number]>('DBP_ERR_PGEDGE_TOO_MANY_STATEMENTS', 'too many prepared statements in this session (max_prepared_statements = %d)'),
  statementExists: createError<[string]>('DBP_ERR_PGEDGE_STATEMENT_EXISTS', 'prepared statement "%s" already exists'),
  statementUnknown: createError<[string]>('DBP_ERR_PGEDGE_STATEMENT_UNKNOWN', 'prepared statement "%s" does not exist'),
  protocol: createError<[string]>('DBP_ERR_PGEDGE_PROTOCOL', 'protocol violation: %s'),
  loginTimeout: createError<[number]>('DBP_ERR_PGEDGE_LOGIN_TIMEOUT', 'startup did not complete within %d s'),
  shardSpan: createError<[string]>('DBP_ERR_PGEDGE_SHARD_SPAN', 'cannot run %s: statements are routed to one shard; constrain the shard column to keys of one shard'),
  shardCrossTransaction: createError<[string, string]>(
    'DBP_ERR_PGEDGE_SHARD_CROSS_TRANSACTION',
    'statement routes to shard "%s" but this session holds a connection on shard "%s" (an open transaction, or session state such as SET): a transaction stays on the shard of its first statement; ROLLBACK and run it in its own transaction',
  ),
  shardMerge: createError<[string]>('DBP_ERR_PGEDGE_SHARD_MERGE', 'a read on every shard cannot use %s: rows are only concatenated across shards; constrain the shard column to one shard'),
  shardParameterType: createError<[number, number, string]>(
    'DBP_ERR_PGEDGE_SHARD_PARAMETER_TYPE',
    'parameter $%d (type OID %d, %s format) is a shard key of a type the router cannot read; bind it as int2, int4, int8, numeric, text or varchar',
  ),
  transactionAborted: createError('DBP_ERR_PGEDGE_TRANSACTION_ABORTED', 'current transaction is aborted, commands ignored until end of transaction block'),
  startupParameterUnknown: createError<[string]>(
    'DBP_ERR_PGEDGE_STARTUP_PARAMETER_UNKNOWN',
    'unsupported startup parameter "%s" in transaction mode: list it in [postgres] ignore_startup_parameters to have it ignored, or use transparent mode',
  ),
  settingsNotApplied: createError<[string]>('DBP_ERR_PGEDGE_SETTINGS_NOT_APPLIED', 'the session\'s startup settings could not be applied on a pooled connection: %s'),
  resultBuffersFull: createError<[number]>(
    'DBP_ERR_PGEDGE_RESULT_BUFFERS_FULL',
    'the proxy holds too many result bytes for all sessions (max_buffered_result_bytes = %d); retry later, or use transparent mode for large results',
  ),
  idleSessionTimeout: createError<[number]>('DBP_ERR_PGEDGE_IDLE_SESSION_TIMEOUT', 'terminating connection due to idle-session timeout (proxy.client_read_timeout_seconds = %d)'),
  idleInTransactionTimeout: createError<[number]>(
    'DBP_ERR_PGEDGE_IDLE_IN_TRANSACTION_TIMEOUT',
    'terminating connection due to idle-in-transaction timeout (proxy.client_read_timeout_seconds = %d)',
  ),
  shutdownTerminated: createError('DBP_ERR_PGEDGE_SHUTDOWN_TERMINATED', 'terminating connection due to administrator command: the proxy is shutting down'),
} as const;

/** SQLSTATE of each pg-edge error (PostgreSQL Appendix A). */
const SQLSTATE: Readonly<Record<string, string>> = {
  DBP_ERR_PGEDGE_SHARD_MISSING: '08004', // sqlserver_rejected_establishment_of_sqlconnection
  DBP_ERR_PGEDGE_SHARD_UNKNOWN: '3D000', // invalid_catalog_name
  DBP_ERR_PGEDGE_NO_ROUTE: '3D000', // invalid_catalog_name
  DBP_ERR_PGEDGE_SHARD_INVALID: '22023', // invalid_parameter_value
  DBP_ERR_PGEDGE_SHARD_FORBIDDEN: '42501', // insufficient_privilege
  DBP_ERR_PGEDGE_TLS_REQUIRED: '28000', // invalid_authorization_specification
  DBP_ERR_PGEDGE_NO_BACKEND: '08006', // connection_failure
  DBP_ERR_PGEDGE_BACKEND_CONNECT: '08006',
  DBP_ERR_PGEDGE_BACKEND_TLS: '08006',
  DBP_ERR_PGEDGE_BACKEND_AUTH: '08006',
  DBP_ERR_PGEDGE_BACKEND_LOST: '08006',
  DBP_ERR_PGEDGE_SESSION_POISONED: '08006',
  DBP_ERR_PGEDGE_TOO_MANY_CONNECTIONS: '53300', // too_many_connections
  DBP_ERR_PGEDGE_SHUTTING_DOWN: '57P03', // cannot_connect_now
  DBP_ERR_PGEDGE_UNSUPPORTED_TYPE: '0A000', // feature_not_supported
  DBP_ERR_PGEDGE_UNSUPPORTED_STATEMENT: '0A000',
  DBP_ERR_PGEDGE_RESULT_TOO_LARGE: '54000', // program_limit_exceeded
  DBP_ERR_PGEDGE_READ_ONLY: '25006', // read_only_sql_transaction
  DBP_ERR_PGEDGE_QUERY_TIMEOUT: '57014', // query_canceled
  DBP_ERR_PGEDGE_QUERY_CANCELED: '57014',
  DBP_ERR_PGEDGE_ADMIN_TERMINATED: '57P01', // admin_shutdown (as pg_terminate_backend)
  DBP_ERR_PGEDGE_PAUSE_TIMEOUT: '57014', // query_canceled
  DBP_ERR_PGEDGE_ACQUIRE_TIMEOUT: '53300',
  DBP_ERR_PGEDGE_STARTUP_PARAMETER: '0A000',
  DBP_ERR_PGEDGE_DATABASE_MISMATCH: '3D000',
  DBP_ERR_PGEDGE_TOO_MANY_STATEMENTS: '53400', // configuration_limit_exceeded
  DBP_ERR_PGEDGE_STATEMENT_EXISTS: '42P05', // duplicate_prepared_statement
  DBP_ERR_PGEDGE_STATEMENT_UNKNOWN: '26000', // invalid_sql_statement_name
  DBP_ERR_PGEDGE_PROTOCOL: '08P01', // protocol_violation
  DBP_ERR_PGEDGE_LOGIN_TIMEOUT: '08P01', // protocol_violation, as PgBouncer's client_login_timeout
  DBP_ERR_PGEDGE_SHARD_SPAN: '0A000', // feature_not_supported
  DBP_ERR_PGEDGE_SHARD_CROSS_TRANSACTION: '25001', // active_sql_transaction
  DBP_ERR_PGEDGE_SHARD_MERGE: '0A000',
  DBP_ERR_PGEDGE_SHARD_PARAMETER_TYPE: '42804', // datatype_mismatch
  DBP_ERR_PGEDGE_TRANSACTION_ABORTED: '25P02', // in_failed_sql_transaction
  // libs/sql's refusals of statements on sharded tables ([[postgres.sharding.rules]])
  DBP_ERR_SQL_SHARD_KEY_MISSING: '0A000',
  DBP_ERR_SQL_SHARD_MULTI: '0A000',
  DBP_ERR_SQL_SHARD_UNSUPPORTED: '0A000',
  DBP_ERR_SQL_SHARD_KEY_ASSIGNED: '428C9', // generated_always: the column cannot be assigned
  DBP_ERR_SQL_SHARD_KEY_UNMAPPED: '22023', // invalid_parameter_value
  DBP_ERR_SQL_SHARD_KEY_INVALID: '22023',
  DBP_ERR_SQL_SHARD_KEY_UNBOUND: '42P02', // undefined_parameter
  DBP_ERR_SQL_SHARD_HINT_UNKNOWN: '22023',
  DBP_ERR_SQL_SHARD_HINT_CONFLICT: '22023',
  DBP_ERR_PGEDGE_RESULT_BUFFERS_FULL: '53200', // out_of_memory
  DBP_ERR_PGEDGE_STARTUP_PARAMETER_UNKNOWN: '42704', // undefined_object, as PostgreSQL refuses an unknown setting
  DBP_ERR_PGEDGE_SETTINGS_NOT_APPLIED: '08006',
  DBP_ERR_PGEDGE_IDLE_SESSION_TIMEOUT: '57P05', // idle_session_timeout, as PostgreSQL's own
  DBP_ERR_PGEDGE_IDLE_IN_TRANSACTION_TIMEOUT: '25P03', // idle_in_transaction_session_timeout
  DBP_ERR_PGEDGE_SHUTDOWN_TERMINATED: '57P01', // admin_shutdown, as a PostgreSQL server shutting down
};

/** The SQLSTATE for any error code pg-edge may have to report (its own, protocol-pg's, else XX000). */
export function sqlStateOf(code: string | undefined): string {
  if (code !== undefined && SQLSTATE[code]) return SQLSTATE[code];
  if (code === 'DBP_ERR_POOL_ACQUIRE_TIMEOUT' || code === 'DBP_ERR_POOL_QUEUE_FULL') return '53300';
  if (code === 'DBP_ERR_POOL_CLOSED') return '57P03';
  if (code === 'DBP_ERR_POOL_CREATE_FAILED' || code === 'DBP_ERR_POOL_CONNECT_TIMEOUT') return '08006';
  return sqlStateForError(code);
}

/**
 * An error the backend reported that reaches the client as the backend worded it, at the severity
 * the proxy chooses: a backend's FATAL (pg_terminate_backend) ends only the pooled connection, so
 * an unheld session gets it as an ERROR and goes on.
 */
export class BackendReportedError extends Error {
  constructor(readonly response: ErrorResponse) {
    super(response.message);
  }
}

/**
 * Failures to open a backend connection: their message carries the OS or TLS error and often the
 * backend's address (for the edge log); the client reads only a stable text naming the backend.
 */
const UNAVAILABLE: ReadonlySet<string> = new Set(['DBP_ERR_PGEDGE_BACKEND_CONNECT', 'DBP_ERR_PGEDGE_BACKEND_TLS', 'DBP_ERR_POOL_CREATE_FAILED']);

/** True for a backend connect failure, whose detail the client does not read (log it where it is met). */
export function isBackendUnavailable(err: unknown): err is DbproxyError {
  return err instanceof DbproxyError && UNAVAILABLE.has(err.code);
}

/** What a client reads for an exception that is not one of dbproxy's errors (a bug, a runtime or OS error). */
export const INTERNAL_ERROR_MESSAGE = 'internal error in the proxy (details in the edge log)';

/** True for an error whose text the client may not read: not dbproxy's own, nor the backend's. */
export function isInternalError(err: unknown): boolean {
  return !(err instanceof DbproxyError) && !(err instanceof BackendReportedError);
}

/**
 * Logs an internal error with its stack where it is met (the client reads only
 * INTERNAL_ERROR_MESSAGE); dbproxy's own errors are not logged here. `warn` for failures a client
 * can cause before its session starts (a broken TLS handshake), `error` for the rest.
 */
export function logIfInternal(logger: Logger, err: unknown, where: Record<string, unknown>, level: 'warn' | 'error' = 'error'): void {
  if (isInternalError(err)) logger[level]({ ...where, err }, 'pg-edge internal error (the client read only XX000)');
}

function clientMessage(err: DbproxyError): string {
  if (UNAVAILABLE.has(err.code)) return `could not connect to backend ${String(err.args[0])}: it is unavailable (details in the edge log)`;
  return err.message;
}

/** The one translator from an internal error to what the client reads (never an arbitrary exception's text). */
export function toErrorResponse(err: unknown, severity: ErrorSeverity = 'ERROR'): ErrorResponse {
  if (err instanceof BackendReportedError) return { ...err.response, severity, severityNonLocalized: severity };
  if (!(err instanceof DbproxyError)) return pgError({ severity, code: sqlStateOf(undefined), message: INTERNAL_ERROR_MESSAGE });
  return pgError({ severity, code: sqlStateOf(err.code), message: clientMessage(err), detail: err.code });
}

/** Every pg-edge code, for the README test. */
export function pgEdgeErrorCodes(): string[] {
  return Object.values(PgEdgeErrors).map((e) => e.code);
}
