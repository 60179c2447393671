// Lent connections that pipelined units may join (the edges' `pipeline_depth > 1`). When every
// connection of a pool is lent, a unit that may be pipelined (an autocommit read) is written behind
// the units already running on the lent connection with the fewest queued, instead of waiting;
// the database answers them in order. A lending takes at most `depth` units in all, the first
// included, then stops taking joiners, so its connection goes back to the pool — and to the writes
// and transactions waiting there — once those units are done. What a unit is, when it ends and
// what the edge checks before joining (same schema, connection not paused or cancelled) stay with
// each edge; the join rule lives here, once.

/** One lending as the registry sees it. */
export interface JoinableLending {
  /** Units queued on the connection now: a join goes to the lending with the fewest. */
  readonly queued: number;
  /** Units run during this lending, the first included (counted here by each join). */
  joined: number;
}

/** Joinable lendings per key (a pool, or a backend name): each at most once. */
export class JoinableLendings<K, L extends JoinableLending> {
  private readonly byKey = new Map<K, L[]>();

  /** `lending` may be joined from now on. */
  add(key: K, lending: L): void {
    let list = this.byKey.get(key);
    if (list === undefined) this.byKey.set(key, (list = []));
    list.push(lending);
  }

  /** Nobody joins `lending` any more; false when it was not joinable. */
  remove(key: K, lending: L): boolean {
    const list = this.byKey.get(key);
    const at = list === undefined ? -1 : list.indexOf(lending);
    if (at < 0) return false;
    const all = list as L[];
    all[at] = all[all.length - 1] as L;
    all.pop();
    return true;
  }

  /**
   * The lending under `key` with the fewest units queued among those that took fewer than `depth`
   * units and that `usable` accepts (the first such on a tie), with this join counted; it stops
   * being joinable when that makes `depth`. The caller counts the new unit in `queued` and has
   * checked that the pool has no idle connection to offer instead. `cap` (default `depth`): the
   * count at which the lending stops being joinable for good — "auto" passes its maximum, since
   * its `depth` follows the waiters and may grow again.
   */
  join(key: K, depth: number, usable: (lending: L) => boolean, cap = depth): L | undefined {
    const list = this.byKey.get(key);
    if (list === undefined) return undefined;
    let best: L | undefined;
    for (const lending of list) {
      if (lending.joined >= depth || (best !== undefined && lending.queued >= best.queued)) continue;
      if (usable(lending)) best = lending;
    }
    if (best === undefined) return undefined;
    if (++best.joined >= cap) this.remove(key, best);
    return best;
  }

  /** Joinable lendings now, over every key. */
  count(): number {
    let n = 0;
    for (const list of this.byKey.values()) n += list.length;
    return n;
  }
}
