// Pipelined reads ([mysql] pipeline_depth > 1). When every connection of a pool is lent, a session
// with an autocommit read need not wait for one: MariaDB and MySQL answer the commands of one
// connection in order, so its command can be written behind the reads already running on a lent
// connection, and each response still reaches the session that wrote its command
// (BackendConnection routes them in order). A lending is the time one pooled connection spends out
// of the pool: opened by a session whose read may be joined, shared by the sessions that joined,
// and returned (or closed) by whichever leaves last. Only single replica-safe reads in autocommit
// join (no transaction, no session state, no preludes, statements already prepared there), so a
// shared connection never carries state from one session to another. A lending whose connection a
// drain retired takes no more joiners: it closes when the sessions on it are done.
import { JoinableLendings, pipelineDepth, pipelineDepthCap, type JoinableLending, type Lease, type PipelineDepthSetting } from '@dbproxy/pool';
import type { BackendConnection } from './backend-connection';
import type { ConnectionPool } from './parked-leases';

export class SharedLending implements JoinableLending {
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

  get queued(): number {
    return this.units;
  }
}

/** The lendings of this process's pools that pipelined reads may join (the rule: JoinableLendings, @dbproxy/pool). */
export class Pipelines {
  private readonly joinable = new JoinableLendings<ConnectionPool, SharedLending>();

  /** A lending others may join while its connection is out (the lease moves into it). */
  open(lease: Lease<BackendConnection>): SharedLending {
    const lending = new SharedLending(lease, lease.pool);
    this.joinable.add(lease.pool, lending);
    return lending;
  }

  /**
   * The lending of a saturated pool with the fewest sessions that `fits` the command (connection
   * open, same schema and character set, statement prepared there); it counts one more. A lending takes
   * at most the depth `setting` gives now (pipelineDepth: "auto" follows the pool's waiters, 1 while
   * none wait) in all, then stops taking joiners: its connection then goes back to the pool when
   * they are done, so waiting writes and transactions get their turn.
   */
  join(pool: ConnectionPool, setting: PipelineDepthSetting, fits: (lending: SharedLending) => boolean): SharedLending | undefined {
    if (!pool.saturated) return undefined;
    const depth = pipelineDepth(setting, pool);
    if (depth <= 1) return undefined;
    const lending = this.joinable.join(pool, depth, (l) => !l.lease.retiring && fits(l), pipelineDepthCap(setting));
    if (lending !== undefined) lending.units++;
    return lending;
  }

  /** No one joins it any more (its connection will be closed). */
  retire(lending: SharedLending): void {
    lending.reusable = false;
    this.joinable.remove(lending.pool, lending);
  }

  /** A session's command ended; true when it was the last (the lease is its to return). */
  leave(lending: SharedLending): boolean {
    if (--lending.units > 0) return false;
    this.joinable.remove(lending.pool, lending);
    return true;
  }

  /** Lendings open now (tests and metrics). */
  count(): number {
    return this.joinable.count();
  }
}
