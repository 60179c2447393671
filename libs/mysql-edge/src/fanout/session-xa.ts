// A session's side of mode = "xa" (the pre-dispatch hook of fanout-path.ts): a DML statement on an
// XA fanout table is taken away from the backend exchange and sent to the xa-coordinator
// (xa-path.ts), with the statement's own shard as a participant. Only one autocommit statement is
// distributed (spec 000): inside a client transaction, in a multi-statement request, beside a
// best_effort fanout of the same statement, or without db-qualified tables it is refused.
// COM_STMT_EXECUTE goes with its parameters inlined as literals (xa-statement.ts).
import type { Tracer } from '@opentelemetry/api';
import type { DbSpan } from '@dbproxy/observability';
import { encodeOk, PacketWriter, type MysqlPacket } from '@dbproxy/protocol-mysql';
import type { SqlRoute } from '@dbproxy/sql';
import { DbproxyError } from '@dbproxy/util';
import { MysqlEdgeErrors } from '../errors';
import type { ClientStatement } from '../session/statement-registry';
import type { PinCause } from '../session/route-planner';
import { startStatementSpan, type StatementSession } from '../session/statement-span';
import { TRANSACTIONAL, type FanoutSession } from './session-hooks';
import { fanoutRules, matchingRules, type FanoutRule } from './fanout-rules';
import { inlinedExecute, unqualifiedTable } from './xa-statement';

/** What the hook needs of the session beyond the fanout hooks. */
export interface XaSession extends FanoutSession {
  readonly edge: FanoutSession['edge'] & { readonly tracer: Tracer | null };
  readonly closed: boolean;
  readonly autocommit: boolean;
  readonly pendingBegin: string | null;
  readonly capabilities: number;
  readonly encoding: BufferEncoding;
  readonly user: string;
  readonly route: StatementSession['route'];
  replySeq: number;
  deadline: number;
  status(): number;
  send(bytes: Buffer): void;
  fail(err: unknown, seq?: number): void;
  transition(to: 'exchanging', reason: string): void;
  commandDone(fatal: boolean): void;
}

/** The client's command: text, or an execute of a prepared statement. */
export type XaCommand = { readonly kind: 'query'; readonly sql: string } | { readonly kind: 'execute'; readonly packet: MysqlPacket; readonly statement: ClientStatement };

/** The XA fanouts a statement matches (empty: not an XA statement; cheap when none is configured). */
function xaRules(s: XaSession, route: SqlRoute): { xa: FanoutRule[]; others: FanoutRule[] } | null {
  const rules = fanoutRules(s.epoch.config);
  if (rules.length === 0 || !rules.some((r) => r.mode === 'xa')) return null;
  const match = matchingRules(rules, route.classification, s.schema);
  if (match.ambiguous.length > 0) return null; // the fanout hold refuses it
  const xa = match.rules.filter((r) => r.mode === 'xa');
  return xa.length === 0 ? null : { xa, others: match.rules.filter((r) => r.mode !== 'xa') };
}

function refusal(s: XaSession, route: SqlRoute, rules: { xa: FanoutRule[]; others: FanoutRule[] }, inTransaction: boolean): DbproxyError | null {
  const names = rules.xa.map((r) => r.name).join('", "');
  const c = route.classification;
  if (c.statementCount > 1) return MysqlEdgeErrors.fanoutMultiStatement(names);
  if (inTransaction || !s.autocommit || s.pendingBegin !== null) return MysqlEdgeErrors.xaTransaction(names);
  if (rules.others.length > 0) return MysqlEdgeErrors.xaUnsupported(names, `it also writes the table of best_effort fanout "${rules.others.map((r) => r.name).join('", "')}"`);
  const bare = unqualifiedTable(c);
  return bare === null ? null : MysqlEdgeErrors.xaUnsupported(names, bare);
}

/** The statement's SERVER span (as for any statement: statement-span.ts); the coordinator's spans are its children. */
function startSpan(s: XaSession, route: SqlRoute): DbSpan | null {
  const span = startStatementSpan(s.edge.tracer, 'query', route, { user: s.user, listener: 'read_write', schema: s.schema, route: s.route });
  span?.setAttribute('dbproxy.route', 'xa');
  return span;
}

/**
 * True when the statement is an XA fanout statement: the session answers it (OK or ERR) from here
 * and must not run it on a backend. False: it goes on as usual.
 */
export function runsOnXa(s: XaSession, command: XaCommand, route: SqlRoute, ownShard: string, pin: PinCause | null): boolean {
  const rules = xaRules(s, route);
  if (rules === null) return false;
  const refused = refusal(s, route, rules, pin !== null && TRANSACTIONAL.has(pin));
  if (refused !== null) {
    s.fail(refused);
    return true;
  }
  let sql: string;
  if (command.kind === 'query') sql = command.sql;
  else {
    const inlined = inlinedExecute({ packet: command.packet, statement: command.statement, capabilities: s.capabilities, encoding: s.encoding });
    if ('refused' in inlined) {
      s.fail(MysqlEdgeErrors.xaUnsupported(rules.xa.map((r) => r.name).join('", "'), inlined.refused));
      return true;
    }
    sql = inlined.sql;
  }
  const seq = s.replySeq;
  s.transition('exchanging', 'xa fanout');
  // the coordinator's deadline and commit allowance bound the wait; the sweep must not time it out first
  s.deadline = 0;
  const span = startSpan(s, route);
  const answer = s.edge.fanout.xa.execute({ rules: rules.xa, ownShard, sql, session: s.id, fingerprint: route.fingerprint.hash, span: span?.server ?? null });
  answer
    .then((result) => {
      if (s.closed) return;
      if (result instanceof DbproxyError) {
        span?.fail(result.code, result.message);
        s.fail(result, seq);
      }
      else s.send(okReply(seq, result.affectedRows, s.status(), s.capabilities));
    })
    .catch((err: unknown) => {
      if (!s.closed) s.fail(err, seq);
    })
    .finally(() => {
      span?.end();
      if (!s.closed) s.commandDone(false);
    });
  return true;
}

function okReply(seq: number, affectedRows: number, statusFlags: number, capabilities: number): Buffer {
  const w = new PacketWriter(32);
  encodeOk(w, seq, { affectedRows, statusFlags }, capabilities);
  return w.flush();
}
