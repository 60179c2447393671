// How many times each kind of state machine entered each state, counted where the move happens.
// A transaction-mode query makes several moves (session and pool connection, there and back);
// counting each is one add to a number, where publishing it on the diagnostics channel built a
// message and ran a subscriber per move. libs/observability reads the tallies when Prometheus
// scrapes (dbproxy_state_transitions_total); the channel still carries every move, with its id
// and reason, to whoever subscribes (the debug log, tests).

/** The counts for one kind of state machine, by target state; they only grow. */
export class TransitionTally {
  private readonly cells = new Map<string, { n: number }>();
  /**
   * The two states counted last and their cells, tried before the map: a machine's moves mostly go
   * back and forth between two states (idle and running, idle and lent), and comparing a state name
   * with the same constant is one pointer comparison where the map hashes it.
   */
  private recentTo = '';
  private recentCell = { n: 0 };
  private olderTo = '';
  private olderCell = { n: 0 };

  constructor(readonly kind: string) {}

  count(to: string): void {
    if (to === this.recentTo) {
      this.recentCell.n++;
      return;
    }
    if (to === this.olderTo) {
      this.olderCell.n++;
    } else {
      let cell = this.cells.get(to);
      if (cell === undefined) this.cells.set(to, (cell = { n: 0 }));
      cell.n++;
      this.olderTo = to;
      this.olderCell = cell;
    }
    // the state counted now becomes the recent one
    const previousTo = this.recentTo;
    const previousCell = this.recentCell;
    this.recentTo = this.olderTo;
    this.recentCell = this.olderCell;
    this.olderTo = previousTo;
    this.olderCell = previousCell;
  }

  /** [target state, moves into it since the process started]. */
  *entries(): IterableIterator<[string, number]> {
    for (const [to, cell] of this.cells) yield [to, cell.n];
  }
}

const tallies = new Map<string, TransitionTally>();

/** The process's tally for `kind`, made on first use; fetch it once per machine, not per move. */
export function transitionTally(kind: string): TransitionTally {
  let tally = tallies.get(kind);
  if (tally === undefined) tallies.set(kind, (tally = new TransitionTally(kind)));
  return tally;
}

/** Every kind counted so far in this process. */
export function transitionTallies(): IterableIterator<TransitionTally> {
  return tallies.values();
}
