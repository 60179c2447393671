// One transition(from, to, reason) per state change of a session or backend connection: checked
// against a table, published on the diagnostics channel (observability logs it at debug level and
// counts dbproxy_state_transitions_total), never silent.
import { channel } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';

const transitions = channel(Channels.stateTransition);
let nextId = 1;

export class IllegalTransition extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IllegalTransition';
  }
}

export class StateMachine<S extends string> {
  readonly id = nextId++;
  private current: S;

  constructor(
    readonly kind: string,
    initial: S,
    private readonly legal: Readonly<Record<S, readonly S[]>>,
  ) {
    this.current = initial;
  }

  get state(): S {
    return this.current;
  }

  is(state: S): boolean {
    return this.current === state;
  }

  /** Moves from `from` to `to`; a move from any other state, or one the table forbids, is a bug. */
  transition(from: S, to: S, reason: string): void {
    if (this.current !== from || !this.legal[from].includes(to)) {
      throw new IllegalTransition(`${this.kind} #${this.id} cannot go from ${this.current} (expected ${from}) to ${to}: ${reason}`);
    }
    this.current = to;
    if (transitions.hasSubscribers) transitions.publish({ kind: this.kind, id: this.id, from, to, reason });
  }
}
