// Pipelined reads ([mysql] pipeline_depth > 1). When every connection of a pool is lent, a session
// with an autocommit read need not wait for one: MariaDB and MySQL answer the commands of one
// connection in order, so its command can be written behind the reads already running on a lent
// connection, and each response still reaches the session that wrote its command
// (BackendConnection routes them in order). A lending is the time one pooled connection spends out
// of the pool: opened by a session whose read may be joined, shared by the sessions that joined,
// and returned (or closed) by whichever leaves last. Only single replica-safe reads in autocommit
// join (no transaction, no session state, no preludes, statements already prepared there), so a
// shared connection never carries state from one session to another.
import type { Lease } from '@dbproxy/pool';
import type { BackendConnection } from './backend-connection';
import type { ConnectionPool } from './parked-leases';

export class SharedLending {
  /** Sessions whose command runs on the connection now. */
  units = 1;
  /** Sessions that ran on it during this lending: at `depth` nobody joins any more, so it goes back to the pool. */
  joined = 1;
  /** False once a session gave up a command mid-way: the connection closes when the last one leaves. */
  reusable = true;

  constructor(
    readonly lease: Lease<BackendConnection>,
    readonly pool: ConnectionPool,
  ) {}

  get connection(): BackendConnection {
    return this.lease.connection;
  }
}

export class Pipelines {
  private readonly joinable = new Map<ConnectionPool, SharedLending[]>();

  /** A lending others may join while its connection is out (the lease moves into it). */
  open(lease: Lease<BackendConnection>): SharedLending {
    const lending = new SharedLending(lease, lease.pool);
    let list = this.joinable.get(lease.pool);
    if (list === undefined) this.joinable.set(lease.pool, (list = []));
    list.push(lending);
    return lending;
  }

  /**
   * The lending of a saturated pool with the fewest sessions whose connection `fits` the command
   * (same schema and character set, statement prepared there); it counts one more. A lending takes
   * at most `depth` sessions in all, then stops taking joiners: its connection then goes back to the
   * pool when they are done, so waiting writes and transactions get their turn.
   */
  join(pool: ConnectionPool, depth: number, fits: (conn: BackendConnection) => boolean): SharedLending | undefined {
    if (!pool.saturated) return undefined;
    const list = this.joinable.get(pool);
    if (list === undefined) return undefined;
    let best: SharedLending | undefined;
    for (const lending of list) {
      if (lending.joined >= depth || (best !== undefined && lending.units >= best.units)) continue;
      if (lending.connection.alive && fits(lending.connection)) best = lending;
    }
    if (best === undefined) return undefined;
    best.units++;
    if (++best.joined >= depth) this.forget(best);
    return best;
  }

  /** No one joins it any more (its connection will be closed). */
  retire(lending: SharedLending): void {
    lending.reusable = false;
    this.forget(lending);
  }

  /** A session's command ended; true when it was the last (the lease is its to return). */
  leave(lending: SharedLending): boolean {
    if (--lending.units > 0) return false;
    this.forget(lending);
    return true;
  }

  /** Lendings open now (tests and metrics). */
  count(): number {
    let n = 0;
    for (const list of this.joinable.values()) n += list.length;
    return n;
  }

  private forget(lending: SharedLending): void {
    const list = this.joinable.get(lending.pool);
    if (list === undefined) return;
    const at = list.indexOf(lending);
    if (at < 0) return;
    list[at] = list[list.length - 1] as SharedLending;
    list.pop();
  }
}
