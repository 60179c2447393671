// Where one statement runs, from its classification and the session's situation: spec 000's rules
// (safe reads to a replica, everything else to the primary, pins for transactions and session
// state, the read-after-write window, the read-only listener) as one pure function.
import type { Classification, SqlRoute } from '@dbproxy/sql';
import { MysqlEdgeErrors } from '../errors';
import { readOnlyRefusal } from './read-only-rules';
import type { DbproxyError } from '@dbproxy/util';

export type ListenerRole = 'read_write' | 'read_only';

/** Why a statement went where it went (metrics label `route`). */
export type RouteLabel = 'replica' | 'primary' | 'read_after_write' | 'fallback' | 'pinned';

/** Why a session holds one backend connection across statements (metrics label `cause`). */
/** `passthrough`: the session's own backend connection (auth passthrough, src/passthrough), for its life. */
export type PinCause = 'transaction' | 'autocommit' | 'session_state' | 'cursor' | 'implicit_transaction' | 'passthrough';

export interface Plan {
  readonly role: 'primary' | 'replica';
  /** Borrow from the primary's reserved capacity (BEGIN and session pins). */
  readonly reserved: boolean;
  /** Keep the connection from this statement on, when it succeeds. */
  readonly pin: PinCause | null;
  readonly label: RouteLabel;
  readonly shard: string;
  /** Opens the read-after-write window when it succeeds on the primary. */
  readonly write: boolean;
  /** A single replica-safe read leaving no state: it may be queued behind other sessions' reads (pipeline_depth). */
  readonly pipelinable?: boolean;
}

export interface PlanContext {
  readonly listener: ListenerRole;
  /** Reads must go to the primary (a write was made within read_after_write_seconds). */
  readonly readAfterWrite: boolean;
  readonly defaultShard: string;
  readonly multiStatements: 'reject' | 'primary';
  /** The shard the statement runs on, when the caller resolved it (src/sharding/shard-target.ts). */
  readonly shard?: string;
}

export type PlanResult = Plan | DbproxyError;

/** The transaction effects that start pinning a connection. */
function pinCauseOf(c: Classification): PinCause | null {
  switch (c.transaction) {
    case 'begin':
    case 'commit_and_chain':
    case 'rollback_and_chain':
      return 'transaction';
    case 'autocommit_off':
      return 'autocommit';
    default:
      return c.session.kind === 'pin' ? 'session_state' : null;
  }
}

function shardOf(route: SqlRoute, ctx: PlanContext): string | DbproxyError {
  const decision = route.decision;
  switch (decision.kind) {
    case 'unsharded':
      return ctx.defaultShard;
    case 'shards':
      if (decision.shards.length === 1) return decision.shards[0] as string;
      return MysqlEdgeErrors.shardKeysSpread('?', decision.shards.join(', '));
    case 'all_shards':
      return MysqlEdgeErrors.shardKeysSpread('?', `every shard: ${decision.reason}`);
    case 'reject':
      return decision.error;
  }
}

/** The plan for a statement on a session that holds no pinned connection. */
export function planStatement(route: SqlRoute, ctx: PlanContext): PlanResult {
  const c = route.classification;
  if (c.statementCount > 1 && ctx.multiStatements === 'reject') return MysqlEdgeErrors.multiStatement();
  const shard = ctx.shard ?? shardOf(route, ctx);
  if (typeof shard !== 'string') return shard;
  const pin = pinCauseOf(c);
  const write = c.family === 'write' || c.family === 'ddl';
  const pipelinable = route.replicaEligible && pin === null && c.statementCount === 1 && !leavesUntrackedState(c);
  if (ctx.listener === 'read_only') {
    const refusal = readOnlyRefusal(route);
    if (refusal !== null) return MysqlEdgeErrors.readOnly(refusal);
    return { role: 'replica', reserved: false, pin, label: 'replica', shard, write: false, pipelinable };
  }
  if (pin !== null) return { role: 'primary', reserved: true, pin, label: 'primary', shard, write };
  if (route.replicaEligible) {
    if (ctx.readAfterWrite) return { role: 'primary', reserved: false, pin: null, label: 'read_after_write', shard, write: false, pipelinable };
    return { role: 'replica', reserved: false, pin: null, label: 'replica', shard, write: false, pipelinable };
  }
  return { role: 'primary', reserved: false, pin: null, label: 'primary', shard, write };
}

/** COM_FIELD_LIST / COM_STATISTICS / COM_INIT_DB: metadata reads and the schema switch. */
export function planCommand(kind: 'metadata' | 'schema', ctx: PlanContext): Plan {
  if (ctx.listener === 'read_only' || (kind === 'metadata' && !ctx.readAfterWrite)) {
    return { role: 'replica', reserved: false, pin: null, label: 'replica', shard: ctx.shard ?? ctx.defaultShard, write: false };
  }
  return { role: 'primary', reserved: false, pin: null, label: kind === 'metadata' ? 'read_after_write' : 'primary', shard: ctx.shard ?? ctx.defaultShard, write: false };
}

/** Unsafe reasons that mean a statement may leave session state behind, or that the edge cannot tell. */
const STATEFUL_REASONS: ReadonlySet<string> = new Set([
  'user_variable',
  'lock_function',
  'sequence_function',
  'user_function',
  'procedure_call',
  'select_into',
  'side_effect_function',
  'parse_failed',
  'too_complex',
  'unterminated',
  'multi_statement',
]);

/**
 * Whether a statement can leave session state on the connection that outlives it and that the edge
 * does not track (so the session pins the connection, and it needs COM_RESET_CONNECTION before
 * another client uses it): variables, temporary tables, locks, SQL-level prepared statements,
 * session settings, or anything the edge could not analyze. Transactions are tracked by the
 * server's status flags, schema and character set are replayed; the values a statement leaves
 * for its own client (see leavesStatementValues) need a reset but no pin.
 */
export function leavesUntrackedState(c: Classification): boolean {
  if (c.session.kind === 'replay') return false;
  if (c.session.kind === 'pin' || c.family === 'session_state') return true;
  for (const reason of c.unsafeReasons) if (STATEFUL_REASONS.has(reason.code)) return true;
  return false;
}

/**
 * Whether a statement leaves values its client may read next and no other client should see
 * (LAST_INSERT_ID, ROW_COUNT, warnings, state functions such as LAST_INSERT_ID(n)): anything but a
 * plain replica-safe read, transaction control or a replayed setting. The connection is then reset
 * before another client gets it (its own session may keep using it).
 */
export function leavesStatementValues(c: Classification): boolean {
  return !c.replicaSafe && c.family !== 'transaction' && c.session.kind !== 'replay';
}
