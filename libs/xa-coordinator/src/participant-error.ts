// What a requester learns about a participant's failure: the server's own error (errno, SQLSTATE,
// message) or a dbproxy error code; never a Node.js internal exception text.
import { DbproxyError } from '@dbproxy/util';
import { XaErrors } from './errors';

export interface ParticipantError {
  readonly code: string;
  readonly message: string;
  readonly errno?: number;
  readonly sqlState?: string;
}

export function participantError(err: unknown): ParticipantError {
  const e = err as { errno?: unknown; sqlState?: unknown; message?: unknown; code?: unknown };
  if (typeof e?.errno === 'number' && typeof e.sqlState === 'string' && e.sqlState.length === 5) {
    return { code: typeof e.code === 'string' ? e.code : 'ER_UNKNOWN', message: String(e.message), errno: e.errno, sqlState: e.sqlState };
  }
  if (err instanceof DbproxyError) return { code: err.code, message: err.message };
  const unreachable = XaErrors.unreachable(typeof e?.code === 'string' ? e.code : 'connection failed');
  return { code: unreachable.code, message: unreachable.message };
}
