// Errors raised by libs/pool; every code is listed in libs/pool/README.md (Errors table).
import { createError } from '@dbproxy/util';

export const PoolErrors = {
  /** No connection became available within the acquire deadline. */
  acquireTimeout: createError<[string, number]>('DBP_ERR_POOL_ACQUIRE_TIMEOUT', 'no connection from pool %s within %d ms'),
  /** The waiter queue is at maxWaiters; the acquire is refused at once. */
  queueFull: createError<[string, number]>('DBP_ERR_POOL_QUEUE_FULL', 'pool %s already has %d waiters, its limit'),
  /** The caller's AbortSignal fired while it waited (the client went away). */
  acquireAborted: createError<[string, number]>('DBP_ERR_POOL_ACQUIRE_ABORTED', 'acquire from pool %s aborted after %d ms'),
  /** The pool is draining or closed: no new acquires; waiters are rejected with this too. */
  closed: createError<[string]>('DBP_ERR_POOL_CLOSED', 'pool %s is closed'),
  /** The factory could not open a connection (the cause is the factory's error). */
  createFailed: createError<[string, string]>('DBP_ERR_POOL_CREATE_FAILED', 'could not open a connection for pool %s: %s'),
  /** Opening a connection took longer than connectTimeoutMs (the cause of a createFailed). */
  connectTimeout: createError<[string, number]>('DBP_ERR_POOL_CONNECT_TIMEOUT', 'connecting for pool %s took longer than %d ms'),
  /** A lease was released a second time. */
  doubleRelease: createError<[string, number]>('DBP_ERR_POOL_DOUBLE_RELEASE', 'lease of connection %s#%d was already released'),
  /** A lease's connection was used after the lease was released. */
  leaseReleased: createError<[string, number]>('DBP_ERR_POOL_LEASE_RELEASED', 'connection %s#%d was used after its lease was released'),
  /** A lease was released to a pool other than the one that granted it. */
  foreignLease: createError<[string, string]>('DBP_ERR_POOL_FOREIGN_LEASE', 'a lease of pool %s was released to pool %s'),
  /** Pool options are out of range (max < 1, negative timeouts, minIdle above capacity...). */
  invalidOptions: createError<[string, string]>('DBP_ERR_POOL_INVALID_OPTIONS', 'invalid options for pool %s: %s'),
  /** A PoolSet has no pool for the backend named. */
  unknownBackend: createError<[string]>('DBP_ERR_POOL_UNKNOWN_BACKEND', 'no pool for backend %s'),
  /** A state change outside the connection state machine: a bug in libs/pool, never expected. */
  illegalTransition: createError<[string, number, string, string, string]>(
    'DBP_ERR_POOL_ILLEGAL_TRANSITION',
    'connection %s#%d cannot go from %s to %s (%s)',
  ),
} as const;
