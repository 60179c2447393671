// One pooled connection's state machine: its states, the legal moves, and the one transition().
import { channel } from 'node:diagnostics_channel';
import { Channels, transitionTally } from '@dbproxy/util';
import { PoolErrors } from './errors';
import type { ConnectionFactory } from './types';

/**
 * creating → idle ⇄ in_use → resetting → idle; in_use and resetting → retiring (closed when it
 * comes back); every state → closed. `in_use → idle` only when the factory has no reset.
 */
export type ConnectionState = 'creating' | 'idle' | 'in_use' | 'resetting' | 'retiring' | 'closed';


/** Which capacity a lent connection counts against, until it is idle or closed again. */
export type Slot = 'ordinary' | 'reserved';

/** Message published on Channels.stateTransition. */
export interface PoolConnectionTransition {
  kind: 'pool-connection';
  id: number;
  pool: string;
  from: ConnectionState;
  to: ConnectionState;
  reason: string;
}

const transitions = channel(Channels.stateTransition);
const tally = transitionTally('pool-connection');
let nextId = 1;

/** The pool's record of one connection. Only libs/pool reads or moves it. */
export class PooledConnection<C> {
  readonly id = nextId++;
  state: ConnectionState = 'creating';
  /** Set once factory.create resolved. */
  raw: C | undefined = undefined;
  /** Pool retire generation at birth; a newer pool generation means retire on arrival. */
  readonly generation: number;
  createdAt: number;
  idleSince = 0;
  /** When the reset in flight started; undefined when none is. */
  resetStartedAt: number | undefined = undefined;
  slot: Slot | undefined = undefined;
  /** Aborts factory.create (connect timeout, drain deadline). */
  connecting: AbortController | undefined = undefined;
  retireReason = '';
  /** The current borrowing, so a drain deadline can revoke it. */
  lease: { revoked: boolean } | undefined = undefined;
  /** Reset callbacks made once per connection, not once per release. */
  afterReset: () => void = noop;
  afterResetFailure: (err: unknown) => void = noop;

  constructor(
    readonly pool: string,
    /** The factory that made it also resets and destroys it, even after the pool got a new one. */
    readonly factory: ConnectionFactory<C>,
    generation: number,
    now: number,
  ) {
    this.generation = generation;
    this.createdAt = now;
  }
}

function noop(): void {}

/**
 * The only way a pooled connection changes state: checks the move is legal and that the
 * connection is where the caller thinks it is, then counts it and publishes it for libs/observability.
 */
export function transition<C>(conn: PooledConnection<C>, from: ConnectionState, to: ConnectionState, reason: string): void {
  if (conn.state !== from || !isLegalTransition(from, to)) {
    throw PoolErrors.illegalTransition(conn.pool, conn.id, conn.state, to, `expected ${from}: ${reason}`);
  }
  conn.state = to;
  tally.count(to);
  if (transitions.hasSubscribers) {
    const message: PoolConnectionTransition = { kind: 'pool-connection', id: conn.id, pool: conn.pool, from, to, reason };
    transitions.publish(message);
  }
}

/** Whether `from → to` is a move of the state machine (a switch: this runs on every acquire and release). */
export function isLegalTransition(from: ConnectionState, to: ConnectionState): boolean {
  switch (from) {
    case 'creating':
      return to === 'idle' || to === 'closed';
    case 'idle':
      return to === 'in_use' || to === 'closed';
    case 'in_use':
      return to === 'resetting' || to === 'idle' || to === 'retiring' || to === 'closed';
    case 'resetting':
      return to === 'idle' || to === 'retiring' || to === 'closed';
    case 'retiring':
      return to === 'closed';
    default:
      return false;
  }
}
