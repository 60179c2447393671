// One transition(from, to, reason) per state change of a session or backend connection: checked
// against the kind's table of legal moves, counted in the kind's tally (libs/observability exports
// dbproxy_state_transitions_total from it) and published on the diagnostics channel when someone
// listens (the debug log), never silent.
import { channel } from 'node:diagnostics_channel';
import { Channels, createError, transitionTally, type TransitionTally } from '@dbproxy/util';

const transitions = channel(Channels.stateTransition);
let nextId = 1;

/** A move the table forbids, or one from a state the machine is not in: a bug in the caller. */
export const IllegalTransition = createError<[string, number, string, string, string, string]>(
  'DBP_ERR_RUNTIME_ILLEGAL_TRANSITION',
  '%s #%d cannot go from %s (expected %s) to %s: %s',
);

export class StateMachine<S extends string> {
  readonly id = nextId++;
  private current: S;
  private readonly tally: TransitionTally;
  /**
   * The two moves checked against the table last, tried first: a session or connection cycles
   * through the same two or three moves, and the table's lookup (a keyed load over a table of its
   * kind, then a scan of the row) cost more than the rest of a transition. The table never changes.
   */
  private checkedFrom: S | undefined = undefined;
  private checkedTo: S | undefined = undefined;
  private checkedFrom2: S | undefined = undefined;
  private checkedTo2: S | undefined = undefined;

  constructor(
    readonly kind: string,
    initial: S,
    private readonly legal: Readonly<Record<S, readonly S[]>>,
  ) {
    this.current = initial;
    this.tally = transitionTally(kind);
  }

  get state(): S {
    return this.current;
  }

  is(state: S): boolean {
    return this.current === state;
  }

  /** Moves from `from` to `to`; a move from any other state, or one the table forbids, throws IllegalTransition. */
  transition(from: S, to: S, reason: string): void {
    if (this.current !== from || !this.allows(from, to)) throw IllegalTransition(this.kind, this.id, this.current, from, to, reason);
    this.current = to;
    this.tally.count(to);
    if (transitions.hasSubscribers) transitions.publish({ kind: this.kind, id: this.id, from, to, reason });
  }

  private allows(from: S, to: S): boolean {
    if ((from === this.checkedFrom && to === this.checkedTo) || (from === this.checkedFrom2 && to === this.checkedTo2)) return true;
    if (!this.legal[from].includes(to)) return false;
    this.checkedFrom2 = this.checkedFrom;
    this.checkedTo2 = this.checkedTo;
    this.checkedFrom = from;
    this.checkedTo = to;
    return true;
  }
}
