// Error registry of libs/testing: every failure names the server, its files and its log tail.
import { createError } from '@dbproxy/util';

/** A server process exited before it became ready. Args: name, exit, data dir, log file, log tail. */
export const ServerExited = createError<[string, string, string, string, string]>(
  'DBP_ERR_TESTING_SERVER_EXITED',
  '%s exited during startup (%s); data dir %s, log %s (files kept until the test process exits); last log lines:\n%s',
);

/** A server did not answer its readiness probe in time. Args: name, ms, data dir, log file, log tail. */
export const StartTimeout = createError<[string, number, string, string, string]>(
  'DBP_ERR_TESTING_START_TIMEOUT',
  '%s was not ready after %d ms; data dir %s, log %s (files kept until the test process exits); last log lines:\n%s',
);

/** The chosen port was taken by someone else between choosing and binding. Args: name, port, log file. */
export const PortInUse = createError<[string, number, string]>(
  'DBP_ERR_TESTING_PORT_IN_USE',
  '%s could not listen on 127.0.0.1:%d: address already in use (log %s)',
);

/** No free port was found. Args: attempts. */
export const NoFreePort = createError<[number]>('DBP_ERR_TESTING_NO_FREE_PORT', 'no free port found after %d attempts');

/** A graceful stop took too long; the server was killed. Args: name, ms, signal, log file. */
export const StopTimeout = createError<[string, number, string, string]>(
  'DBP_ERR_TESTING_STOP_TIMEOUT',
  '%s did not stop within %d ms of %s and was killed; log %s',
);

/** An operation does not fit the server's lifecycle state. Args: operation, name, state. */
export const WrongState = createError<[string, string, string]>(
  'DBP_ERR_TESTING_WRONG_STATE',
  'cannot %s %s while it is %s',
);

/** A setup command (initdb, mariadb-install-db, pg_basebackup, ...) failed. Args: command, reason, output tail. */
export const CommandFailed = createError<[string, string, string]>(
  'DBP_ERR_TESTING_COMMAND_FAILED',
  '%s failed (%s); output:\n%s',
);

/** A replica could not attach to its primary or did not catch up. Args: replica, reason, log file, log tail. */
export const ReplicationFailed = createError<[string, string, string, string]>(
  'DBP_ERR_TESTING_REPLICATION_FAILED',
  'replication to %s failed: %s; log %s; last log lines:\n%s',
);

/** A Redis Cluster did not reach a healthy state. Args: reason, run dir, log tails. */
export const ClusterNotReady = createError<[string, string, string]>(
  'DBP_ERR_TESTING_CLUSTER_NOT_READY',
  'redis cluster not ready: %s; files under %s; last log lines:\n%s',
);

/** waitFor() or withTimeout() ran out of time. Args: ms, what was awaited. */
export const WaitTimeout = createError<[number, string]>('DBP_ERR_TESTING_WAIT_TIMEOUT', 'timed out after %d ms waiting for %s');

/** An option passed to a start function is out of range. Args: option, reason. */
export const InvalidOption = createError<[string, string]>('DBP_ERR_TESTING_INVALID_OPTION', 'invalid option %s: %s');

/** A required server binary is not installed. Args: binary, where it was looked for. */
export const BinaryNotFound = createError<[string, string]>('DBP_ERR_TESTING_BINARY_NOT_FOUND', '%s not found (looked in %s)');
