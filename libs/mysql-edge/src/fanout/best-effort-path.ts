// mode = "best_effort": each target shard's primary gets the batch's copies in order, over the
// edge's own pooled connections to it, at most `concurrency` copies of the fanout in flight in the
// process; targets run side by side. A copy that fails stops that target's batch (the rest are
// `skipped`: a later statement may depend on it); the other targets go on. Everything ends within
// the rule's timeout_seconds, queue wait included; a copy still running then is abandoned and its
// connection closed (its outcome on that server is unknown, and the warning says so).
import type { Lease } from '@dbproxy/pool';
import type { DbproxyError } from '@dbproxy/util';
import type { BackendConnection } from '../backend/backend-connection';
import type { BackendPools } from '../backend/backend-pools';
import type { EdgeEpoch } from '../epoch';
import { toMysqlError } from '../errors';
import { CopyExchange, type CopyReply } from './copy-exchange';
import type { CopyLane } from './copy-lane';
import type { CopyStatement } from './copy-statement';
import type { CopyFailure, CopyResult, FanoutBatch, FanoutPath } from './fanout-path';
import type { FanoutRule } from './fanout-rules';

export interface CopyDeps {
  epoch(): EdgeEpoch;
  readonly pools: BackendPools;
  lane(rule: FanoutRule): CopyLane;
  /** One copy ended (or was skipped) with `result`. */
  counted(rule: FanoutRule, shard: string, result: CopyResult, n?: number): void;
  failed(batch: FanoutBatch, failure: CopyFailure, statement: CopyStatement): void;
}

interface Target {
  readonly batch: FanoutBatch;
  readonly shard: string;
  readonly deadline: number;
}

const TIMED_OUT = Symbol('timeout');

export class BestEffortPath implements FanoutPath {
  readonly mode = 'best_effort' as const;

  constructor(private readonly deps: CopyDeps) {}

  async run(batch: FanoutBatch): Promise<CopyFailure[]> {
    const deadline = Date.now() + batch.rule.timeoutMs;
    const targets = batch.rule.targets.filter((shard) => shard !== batch.ownShard);
    const failures = await Promise.all(targets.map((shard) => this.target({ batch, shard, deadline })));
    return failures.flat();
  }

  /** The batch's copies to one target, in order, until one fails. */
  private async target(t: Target): Promise<CopyFailure[]> {
    const { batch, shard } = t;
    const statements = batch.statements;
    for (let i = 0; i < statements.length; i++) {
      const statement = statements[i] as CopyStatement;
      const failure = await this.copy(t, statement);
      this.deps.counted(batch.rule, shard, failure === null ? 'ok' : failure.result);
      if (failure === null) continue;
      this.deps.failed(batch, failure, statement);
      const rest = statements.length - i - 1;
      if (rest === 0) return [failure];
      this.deps.counted(batch.rule, shard, 'skipped', rest);
      const skipped: CopyFailure = { ...failure, result: 'skipped', message: `${rest} later cop${rest === 1 ? 'y' : 'ies'} of this transaction not sent after the failure above` };
      return [failure, skipped];
    }
    return [];
  }

  /** One copy within the lane's bound; null when it ran and the server said OK. */
  private async copy(t: Target, statement: CopyStatement): Promise<CopyFailure | null> {
    const lane = this.deps.lane(t.batch.rule);
    if (!(await lane.enter(t.deadline))) return this.failure(t, null, 'timeout', 1969, `not sent: no copy slot (concurrency ${lane.limit}) within timeout_seconds`);
    try {
      return await this.onPrimary(t, statement);
    } finally {
      lane.done();
    }
  }

  private async onPrimary(t: Target, statement: CopyStatement): Promise<CopyFailure | null> {
    const epoch = this.deps.epoch();
    const primary = epoch.directory.primary(t.shard);
    if (primary === undefined) return this.edgeFailure(t, null, epoch.directory.unusable(t.shard, 'primary', false, Date.now()));
    const pool = this.deps.pools.pool(primary.name, t.batch.profile);
    if (pool === undefined) return this.failure(t, primary.name, 'failed', 1429, `backend "${primary.name}" is not in this configuration epoch`);
    const remaining = t.deadline - Date.now();
    if (remaining <= 0) return this.failure(t, primary.name, 'timeout', 1969, 'not sent: timeout_seconds passed');
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), remaining);
    try {
      let lease: Lease<BackendConnection>;
      try {
        lease = await pool.acquire({ signal: abort.signal, timeoutMs: remaining });
      } catch (err) {
        if (abort.signal.aborted) return this.failure(t, primary.name, 'timeout', 1969, 'not sent: no pooled connection within timeout_seconds');
        return this.edgeFailure(t, primary.name, err);
      }
      return await this.exchange(t, lease, statement, abort.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private async exchange(t: Target, lease: Lease<BackendConnection>, statement: CopyStatement, signal: AbortSignal): Promise<CopyFailure | null> {
    const backend = lease.backend;
    if (!lease.connection.alive) {
      lease.pool.release(lease, { reusable: false, reason: 'closed' });
      return this.failure(t, backend, 'failed', 1158, 'the pooled connection was already closed');
    }
    const exchange = new CopyExchange(lease.connection, statement);
    const timedOut = new Promise<typeof TIMED_OUT>((resolve) => signal.addEventListener('abort', () => resolve(TIMED_OUT), { once: true }));
    const reply: CopyReply | typeof TIMED_OUT = await Promise.race([exchange.run(), timedOut]);
    if (reply === TIMED_OUT) {
      exchange.abandon();
      lease.pool.release(lease, { reusable: false, reason: 'fanout-timeout' });
      return this.failure(t, backend, 'timeout', 1969, 'no answer within timeout_seconds: the connection was closed, the copy may or may not have run there');
    }
    const usable = reply.ok || 'err' in reply;
    lease.pool.release(lease, usable ? { reusable: true } : { reusable: false, reason: 'fanout-failed' });
    if (reply.ok) return null;
    if ('err' in reply) return this.failure(t, backend, 'failed', reply.err.code, reply.err.message);
    return this.edgeFailure(t, backend, reply.lost);
  }

  private edgeFailure(t: Target, backend: string | null, err: unknown): CopyFailure {
    const wire = toMysqlError(err as DbproxyError);
    return this.failure(t, backend, 'failed', wire.code, wire.message);
  }

  private failure(t: Target, backend: string | null, result: CopyFailure['result'], code: number, message: string): CopyFailure {
    return { fanout: t.batch.rule.name, shard: t.shard, backend, result, code, message };
  }
}
