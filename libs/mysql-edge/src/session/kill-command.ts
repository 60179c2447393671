// KILL statements of a session, served by the edge (src/kill): never sent to a server, where they
// would run with the pool user's privilege over every pooled connection. Also what a KILL does to
// the session it names.
import type { MysqlPacket } from '@dbproxy/protocol-mysql';
import { MysqlEdgeErrors } from '../errors';
import { batchMentionsKill, parseKill, type KillRequest } from '../kill/kill-statement';
import type { BackendThread, KillableSession } from '../kill/kill-switch';
import type { ClientSession } from './client-session';

/** Whether the edge serves this COM_QUERY as a KILL (its command is KILL, or a batch names KILL). */
export function isKill(command: string, statements: number, sql: string): boolean {
  return command === 'kill' || (statements > 1 && batchMentionsKill(sql));
}

/** A KILL statement: the edge answers OK, 1095 or 1235, as the server would. */
export function killCommand(s: ClientSession, sql: string, statements: number): void {
  if (statements > 1) return s.fail(MysqlEdgeErrors.killUnsupported('KILL in a multi-statement request'));
  runKill(s, parseKill(sql));
}

/** COM_PROCESS_KILL (the old mysql_kill()): KILL CONNECTION of the 4-byte id. */
export function processKill(s: ClientSession, p: MysqlPacket): void {
  if (p.payload.length < 5) throw MysqlEdgeErrors.protocol('COM_PROCESS_KILL is too short');
  runKill(s, { kind: 'kill', scope: 'connection', id: p.payload.readUInt32LE(1) });
}

function runKill(s: ClientSession, request: KillRequest): void {
  if (request.kind === 'refused') {
    s.edge.metrics.kills.inc({ scope: 'unsupported', outcome: 'refused' });
    return s.fail(MysqlEdgeErrors.killUnsupported(request.form));
  }
  const kills = s.edge.metrics.kills;
  if (request.id === s.connectionId) {
    kills.inc({ scope: request.scope, outcome: 'ok' });
    // its own connection: the KILL is the running statement, so nothing else to stop
    if (request.scope === 'query') return s.replyOk();
    return s.fatal(MysqlEdgeErrors.connectionKilled(), s.replySeq);
  }
  s.transition('exchanging', 'kill');
  s.deadline = Date.now() + s.epoch.limits.queryTimeoutMs;
  void s.edge.kills.kill(request.scope, request.id, s.user).then((outcome) => {
    kills.inc({ scope: request.scope, outcome });
    if (s.state === 'closed') return;
    if (outcome === 'ok') s.replyOk();
    else s.fail(MysqlEdgeErrors.killDenied(request.id));
    s.commandDone(false);
  });
}

/** The session as KILLs from other sessions see it. */
export function killable(s: ClientSession): KillableSession {
  return {
    get user() {
      return s.state === 'login' || s.state === 'closed' ? '' : s.user;
    },
    interruptQuery: () => s.runningExchange()?.interrupt(MysqlEdgeErrors.queryInterrupted()) ?? null,
    interruptFailed: () => s.runningExchange()?.timeout(MysqlEdgeErrors.queryInterrupted()),
    killConnection: (): BackendThread | null => {
      const ex = s.runningExchange();
      const thread = ex?.runningThread() ?? null;
      ex?.timeout(MysqlEdgeErrors.connectionKilled());
      s.close('killed', true);
      return thread;
    },
  };
}
