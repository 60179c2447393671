// What a transaction-mode session needs for statement sharding, in one place: the unit's shard,
// the bound route of each execution, the deferred BEGIN, and reads on every shard.
import type { Bind } from '@dbproxy/protocol-pg';
import type { SqlRoute, SqlRouter } from '@dbproxy/sql';
import type { EdgeEpoch } from '../../edge-context';
import { PgEdgeErrors } from '../../errors';
import type { PgBackendConnection } from '../backend-connection';
import type { TransactionPools } from '../backend-pools';
import type { ClientStatement } from '../statements';
import { exchange, errorText } from './backend-exchange';
import { BoundRoutes } from './bound-routes';
import { DeferredBegin } from './deferred-begin';
import { FanoutCancel, readOnEveryShard, type FanoutAnswer, type FanoutRequest } from './shard-fanout';
import { StatementSharding, type UnitShard } from './statement-sharding';

export class ShardedUnits {
  readonly deferred = new DeferredBegin();
  private fanout: FanoutCancel | undefined;
  readonly executionRoute: (statement: ClientStatement, bind: Bind) => SqlRoute;

  private constructor(
    private readonly epoch: EdgeEpoch,
    private readonly sharding: StatementSharding,
    router: SqlRouter,
  ) {
    const bound = new BoundRoutes(router);
    this.executionRoute = (statement, bind) => bound.route(statement, bind);
  }

  /** Undefined when the configuration has no [[postgres.sharding.rules]]. */
  static of(epoch: EdgeEpoch, router: SqlRouter, userName: string): ShardedUnits | undefined {
    const sharding = epoch.config.postgres.sharding;
    if (!StatementSharding.active(sharding)) return undefined;
    const user = epoch.config.users.find((u) => u.name === userName);
    return new ShardedUnits(epoch, new StatementSharding(sharding, { name: userName, shards: user?.shards ?? [] }), router);
  }

  /** The unit's shard; `held`: the shard of the connection the session holds. A pending transaction that was refused stays aborted. */
  unitShard(executions: readonly SqlRoute[], held: string | undefined): UnitShard {
    const aborted = held === undefined ? this.deferred.abortedError() : undefined;
    if (aborted) return { kind: 'refuse', error: aborted, reason: 'transaction_aborted' };
    let unit = this.sharding.unitShard(executions, held);
    // a BEGIN answered here: the transaction is open even though no connection holds it yet
    if (unit.kind === 'fanout' && this.deferred.pending) unit = { kind: 'refuse', error: PgEdgeErrors.shardSpan('a read on several shards inside a transaction'), reason: 'multi_shard' };
    if (unit.kind === 'refuse' && held === undefined) this.deferred.refusedStatus();
    return unit;
  }

  /** Sends the deferred BEGIN on the connection the transaction's first statement got. */
  async openTransaction(conn: PgBackendConnection, begin: string): Promise<void> {
    conn.dirty = true;
    const answer = await exchange(conn, begin, { maxBytes: 1 << 16 }).catch(() => {
      throw PgEdgeErrors.backendLost(conn.backend);
    });
    if (answer.error) throw PgEdgeErrors.backendLost(`${conn.backend} (BEGIN failed: ${errorText(answer.error)})`);
  }

  /** The read on every shard; `timeoutMs` bounds it as a whole (then it is cancelled, 57014). */
  async readOnEveryShard(pools: TransactionPools, request: FanoutRequest, timeoutMs: number): Promise<FanoutAnswer> {
    const cancel = new FanoutCancel();
    this.fanout = cancel;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      cancel.cancel();
    }, timeoutMs);
    try {
      const answer = await readOnEveryShard(this.epoch, pools, request, cancel);
      if (timedOut) throw PgEdgeErrors.queryTimeout(Math.round(timeoutMs / 1000));
      return answer;
    } catch (err) {
      if (timedOut) throw PgEdgeErrors.queryTimeout(Math.round(timeoutMs / 1000));
      throw err;
    } finally {
      clearTimeout(timer);
      this.fanout = undefined;
    }
  }

  /** A client CancelRequest: true when a read on every shard was running (it is cancelled). */
  cancelRunning(): boolean {
    if (!this.fanout) return false;
    this.fanout.cancel();
    return true;
  }
}
