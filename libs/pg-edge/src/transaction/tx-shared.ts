// What transaction-mode sessions of one service instance share: pools, SCRAM secrets, the
// ParameterStatus set clients are shown, and the sessions whose queries have a deadline.
import { performance } from 'node:perf_hooks';
import type { SqlRouter } from '@dbproxy/sql';
import type { EdgeEpoch } from '../edge-context';
import { PgEdgeErrors } from '../errors';
import type { TransactionPools } from './backend-pools';
import { StatementRoutes } from './batch-plan';
import { ScramSecrets } from './frontend-auth';
import type { ReplayPositions } from './causal-lsn';
import { ResultBudget } from './result-budget';
import { RunningSessions } from './running-sessions';
import { SessionSettings } from './session-settings';

export class TxShared {
  readonly secrets = new ScramSecrets();
  readonly running = new RunningSessions();
  /** Result bytes held by all sessions of this process (max_buffered_result_bytes, set per epoch by the service). */
  readonly resultBudget = new ResultBudget(Number.POSITIVE_INFINITY);
  /** Startup settings checked on the backend and interned (tracked startup parameters). */
  readonly settings: SessionSettings;
  private readonly parameterCache = new Map<string, Promise<ReadonlyMap<string, string>>>();
  private readonly routers = new WeakMap<EdgeEpoch, SqlRouter>();
  private readonly statementRoutes = new WeakMap<SqlRouter, StatementRoutes>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    readonly pools: TransactionPools,
    private readonly makeRouter: (epoch: EdgeEpoch) => SqlRouter,
    /** Causal reads: replicas' replayed LSNs seen by this process, outcome metrics. */
    readonly replay: ReplayPositions,
  ) {
    this.settings = new SessionSettings(pools);
    this.sweeper = setInterval(() => {
      this.running.checkDeadlines(performance.now());
    }, 100);
    this.sweeper.unref();
  }

  router(epoch: EdgeEpoch): SqlRouter {
    let router = this.routers.get(epoch);
    if (!router) {
      router = this.makeRouter(epoch);
      this.routers.set(epoch, router);
    }
    return router;
  }

  /** Routes by statement text for Parse (shared by the epoch's sessions, bounded). */
  statementRoutesOf(router: SqlRouter): StatementRoutes {
    let routes = this.statementRoutes.get(router);
    if (!routes) {
      routes = new StatementRoutes(router);
      this.statementRoutes.set(router, routes);
    }
    return routes;
  }

  /** The server's ParameterStatus values for a shard, read once from a pooled connection to its primary. */
  parameters(epoch: EdgeEpoch, shard: string): Promise<ReadonlyMap<string, string>> {
    const key = `${epoch.epoch}/${shard}`;
    let cached = this.parameterCache.get(key);
    if (!cached) {
      cached = this.fetchParameters(epoch, shard);
      this.parameterCache.set(key, cached);
      cached.catch(() => this.parameterCache.delete(key));
    }
    return cached;
  }

  private async fetchParameters(epoch: EdgeEpoch, shard: string): Promise<ReadonlyMap<string, string>> {
    const target = epoch.directory.primary(shard) ?? epoch.directory.replica(shard, this.pools, true).target;
    if (!target) throw PgEdgeErrors.noBackend('primary', shard);
    const lease = await this.pools.acquire(target.config.name, false);
    const parameters = new Map(lease.connection.parameters);
    this.pools.release(lease, true);
    return parameters;
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
