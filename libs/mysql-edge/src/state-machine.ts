// One transition(from, to, reason) for every state change of sessions and backend connections:
// checked against a table, counted in a flat array (exported as a metric at scrape time), and
// logged at debug level. No allocation and no channel publish per change: it runs per query.
import type { Logger } from '@dbproxy/observability';
import { MysqlEdgeErrors } from './errors';

export interface TransitionCount {
  readonly kind: string;
  readonly from: string;
  readonly to: string;
  readonly count: number;
}

/** The legal moves and the counters of one kind of state machine (shared by all its instances). */
export class StateTable<S extends string> {
  private readonly index: Readonly<Record<S, number>>;
  private readonly legal: Uint8Array;
  private readonly counts: Float64Array;
  private readonly debug: boolean;

  constructor(
    readonly kind: string,
    private readonly states: readonly S[],
    moves: Readonly<Record<S, readonly S[]>>,
    private readonly logger?: Logger,
  ) {
    const index = {} as Record<S, number>;
    states.forEach((s, i) => (index[s] = i));
    this.index = index;
    const n = states.length;
    this.legal = new Uint8Array(n * n);
    this.counts = new Float64Array(n * n);
    for (const from of states) for (const to of moves[from]) this.legal[index[from] * n + index[to]] = 1;
    this.debug = logger?.isLevelEnabled('debug') ?? false;
  }

  /** Checks and counts one move; an illegal one is a bug and throws. */
  move(id: number, from: S, to: S, reason: string): void {
    const at = this.index[from] * this.states.length + this.index[to];
    if (this.legal[at] !== 1) throw MysqlEdgeErrors.illegalTransition(`${this.kind} #${id}`, from, to, reason);
    this.counts[at]++;
    if (this.debug) this.logger?.debug({ kind: this.kind, id, from, to, reason }, 'state transition');
  }

  /** Non-zero counts, for the metrics collector. */
  snapshot(): TransitionCount[] {
    const out: TransitionCount[] = [];
    const n = this.states.length;
    for (let i = 0; i < this.counts.length; i++) {
      if (this.counts[i] === 0) continue;
      out.push({ kind: this.kind, from: this.states[Math.floor(i / n)] as string, to: this.states[i % n] as string, count: this.counts[i] as number });
    }
    return out;
  }
}
