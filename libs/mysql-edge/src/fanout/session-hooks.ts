// The two calls the session's command handlers make into fanout (statement-commands.ts): the hold
// for a COM_QUERY or COM_STMT_EXECUTE, made before it runs. Sessions without fanouts configured
// pay one WeakMap lookup per statement.
import type { MysqlPacket } from '@dbproxy/protocol-mysql';
import type { SqlRoute } from '@dbproxy/sql';
import type { DbproxyError } from '@dbproxy/util';
import type { EdgeEpoch } from '../epoch';
import type { PinCause, Plan } from '../session/route-planner';
import type { ClientStatement } from '../session/statement-registry';
import { executeCopy, queryCopy, type CopyStatement, type SessionCopyState } from './copy-statement';
import type { FanoutCoordinator } from './fanout-coordinator';
import { fanoutRules } from './fanout-rules';
import { SessionFanout, type ResponseHold } from './session-fanout';

export interface FanoutSession extends SessionCopyState {
  readonly id: number;
  readonly profile: number;
  readonly epoch: EdgeEpoch;
  readonly edge: { readonly fanout: FanoutCoordinator };
  fanout: SessionFanout | null;
}

/** Pins that hold a client transaction. */
export const TRANSACTIONAL: ReadonlySet<PinCause> = new Set(['transaction', 'autocommit', 'implicit_transaction']);

function holdFor(s: FanoutSession, route: SqlRoute, plan: Plan, pin: PinCause | null, sql: string | null, copy: () => CopyStatement): ResponseHold | DbproxyError | null {
  const rules = fanoutRules(s.epoch.config);
  if (s.fanout === null) {
    if (rules.length === 0) return null;
    s.fanout = new SessionFanout(s.edge.fanout, s.id);
  }
  return s.fanout.holdFor({
    classification: route.classification,
    rules,
    sql,
    schema: s.schema,
    inTransaction: pin !== null && TRANSACTIONAL.has(pin),
    ownShard: plan.shard,
    profile: s.profile,
    copy,
  });
}

/** The hold of a COM_QUERY (null: forwarded as usual). */
export function queryHold(s: FanoutSession, p: MysqlPacket, sql: string, route: SqlRoute, plan: Plan, pin: PinCause | null): ResponseHold | DbproxyError | null {
  return holdFor(s, route, plan, pin, sql, () => queryCopy(p, s, route.fingerprint.text));
}

/** The hold of a COM_STMT_EXECUTE (null: forwarded as usual). */
export function executeHold(s: FanoutSession, p: MysqlPacket, statement: ClientStatement, route: SqlRoute, plan: Plan, pin: PinCause | null): ResponseHold | DbproxyError | null {
  return holdFor(s, route, plan, pin, null, () => executeCopy(p, statement, s, route.fingerprint.text));
}

export function isHoldError(hold: ResponseHold | DbproxyError | null): hold is DbproxyError {
  return hold !== null && !('settle' in hold);
}
