// A mysql-edge session as the admin interface sees it (GET /sessions) and what an operator's kill
// does to it: ERR 1927 with the reason, the session closed, its running statement's thread killed.
import type { SessionSnapshot } from '@dbproxy/runtime';
import { MysqlEdgeErrors, toMysqlError } from '../errors';
import type { ClientSession } from './client-session';
import type { PinCause } from './route-planner';

const TRANSACTIONAL: ReadonlySet<PinCause> = new Set(['transaction', 'autocommit', 'implicit_transaction']);

function stateOf(s: ClientSession, pin: PinCause | null, backend: string | null): string {
  if (s.held) return 'held';
  switch (s.state) {
    case 'login':
    case 'reauth':
      return 'login';
    case 'routing':
      // a command that waited for a pooled connection stays in 'routing' once it got one
      return backend === null ? 'waiting' : 'running';
    case 'exchanging':
      return 'running';
    case 'closed':
      return 'closed';
    default:
      if (pin === null) return s.pendingBegin !== null ? 'in transaction' : 'idle';
      return TRANSACTIONAL.has(pin) ? 'in transaction' : 'pinned';
  }
}

export function describeSession(s: ClientSession): SessionSnapshot {
  const ex = s.runningExchange();
  const pin = ex?.pin ?? null;
  const backend = ex?.backendName ?? null;
  return {
    id: s.adminId,
    clientAddress: s.clientAddress,
    user: s.user,
    database: s.schema ?? '',
    listener: s.listener,
    state: stateOf(s, pin, backend),
    statement: s.statement,
    backend,
    pinnedReason: pin,
    epoch: s.epoch.epoch,
    startedAt: s.startedAt,
    bytesIn: s.socket.bytesRead,
    bytesOut: s.socket.bytesWritten + s.directBytesOut,
    route: s.route?.route ?? null,
    shard: s.homeShard,
  };
}

/** Ends the session for an operator: the client reads ERR 1927 with `reason`. */
export function adminKill(s: ClientSession, reason: string): void {
  const err = MysqlEdgeErrors.adminKilled(reason);
  const ex = s.runningExchange();
  const thread = ex?.runningThread() ?? null;
  if (ex !== null && (s.state === 'exchanging' || s.state === 'routing')) ex.timeout(err);
  else s.sendError(toMysqlError(err), s.heldReplySeq());
  s.edge.metrics.errors.inc({ code: '1927' });
  s.close('killed by an administrator', true);
  if (thread !== null) void s.edge.kills.killThread(thread, 'CONNECTION');
}
