// A session's side of the result cache (called from session/statement-commands.ts): a cacheable
// COM_QUERY SELECT is looked up before it is routed (a hit is answered without a backend, a miss
// joins an identical one running in this process or runs on the primary with its response held
// for the fill); a write to a cached table has its response held until the tables' generations
// are bumped, so its client gets the OK only when no cache entry of the old data is reachable.
// Inside a transaction, written tables are also bumped again when the COMMIT succeeds.
import { Buffer } from 'node:buffer';
import type { ResponseSummary } from '@dbproxy/protocol-mysql';
import type { Classification, SqlRoute, TransactionEffect } from '@dbproxy/sql';
import type { EdgeContext } from '../edge-context';
import type { EdgeEpoch } from '../epoch';
import type { ResponseHold } from '../fanout/session-fanout';
import type { Plan } from '../session/route-planner';
import { readTables, writtenTables } from './cache-eligibility';
import { entryBase } from './result-cache';
import { withSequence } from './reply-sequence';

/** What the cache needs of a session. */
export interface CacheSession {
  readonly edge: EdgeContext;
  readonly epoch: EdgeEpoch;
  readonly closed: boolean;
  readonly schema: string | null;
  readonly charsetKey: string;
  readonly profile: number;
  readonly autocommit: boolean;
  readonly pinned: boolean;
  readonly pendingBegin: string | null;
  replySeq: number;
  deadline: number;
  /** Cached tables written in the open transaction: bumped again at its COMMIT. */
  cacheWrites: Set<string> | null;
  inTransaction(): boolean;
  send(bytes: Buffer): void;
  fail(err: unknown, seq?: number): void;
  transition(to: 'routing', reason: string): void;
  commandDone(fatal: boolean): void;
}

/** What names a cached result besides session state: the statement text (made only when needed; null: not cacheable) and the database its tables resolve in. */
export interface CachedCommand {
  readonly text: string | (() => string | null);
  readonly schema: string | null;
}

const CURSOR_FLAGS = 0x07; // CURSOR_TYPE_READ_ONLY | FOR_UPDATE | SCROLLABLE
const PARAMETER_COUNT_AVAILABLE = 0x08;

/**
 * The key text of a COM_STMT_EXECUTE: the statement, the parameter types in force and the
 * parameters' null bitmap and values as sent, so executions with the same parameters share an
 * entry (whether or not they resend the types). Null (not cached) for cursors, long data and
 * executes that carry query attributes.
 */
export function executeText(payload: Buffer, statement: { entry: { sql: Buffer }; paramCount: number; types: Buffer | null; longData: Buffer[] | null }): string | null {
  const flags = payload[5] as number;
  if (flags & (CURSOR_FLAGS | PARAMETER_COUNT_AVAILABLE) || statement.longData !== null) return null;
  const n = statement.paramCount;
  if (n === 0) return `execute\0${statement.entry.sql.toString('latin1')}`;
  const bitmap = (n + 7) >> 3;
  const bound = payload[10 + bitmap];
  const values = payload.subarray(10 + bitmap + 1 + (bound === 1 ? 2 * n : 0));
  if (statement.types === null || bound === undefined) return null;
  return `execute\0${statement.entry.sql.toString('latin1')}\0${statement.types.toString('hex')}\0${payload.subarray(10, 10 + bitmap).toString('hex')}\0${values.toString('hex')}`;
}

/** Runs the statement on a backend with `plan`, its response held by `hold` (null: forwarded as usual). */
export type RunOnBackend = (plan: Plan, hold: ResponseHold | null) => void;

const COMMITS: ReadonlySet<TransactionEffect> = new Set(['commit', 'commit_and_chain', 'implicit_commit', 'autocommit_on']);
const ROLLBACKS: ReadonlySet<TransactionEffect> = new Set(['rollback', 'rollback_and_chain']);

function inTransaction(s: CacheSession): boolean {
  return s.pinned || s.pendingBegin !== null || !s.autocommit || s.inTransaction();
}

/**
 * True when the cache took the statement (answered it, or will run it through `run`); false: the
 * caller goes on as usual. Only COM_QUERY SELECTs come here.
 */
export function cachedRead(s: CacheSession, route: SqlRoute, command: CachedCommand, plan: Plan, run: RunOnBackend): boolean {
  const cache = s.edge.cache;
  if (!cache.configured || route.classification.family !== 'read') return false;
  if (inTransaction(s)) return (cache.bypass('transaction'), false);
  const tables = readTables(route, command.schema, cache.settings);
  if (typeof tables === 'string') return (cache.bypass(tables), false);
  const text = typeof command.text === 'string' ? command.text : command.text();
  if (text === null) return (cache.bypass('not_cacheable'), false);
  const store = cache.usable();
  if (store === null) return (cache.bypass('unavailable'), false);
  const base = entryBase({ sql: text, schema: command.schema, charset: s.charsetKey, capabilities: s.profile });
  const seq = s.replySeq;
  const fingerprint = route.fingerprint.text;
  s.transition('routing', 'cache lookup');
  s.deadline = 0; // Redis commands time out on their own (result-store.ts)
  const answer = (response: Buffer): void => {
    s.send(withSequence(response, seq));
    s.commandDone(false);
  };
  const onPrimary: Plan = { ...plan, role: 'primary', label: 'primary', pipelinable: false };
  void cache.lookup(store, tables, base).then((found) => {
    if (s.closed) return;
    if (found === null) {
      cache.bypass('unavailable');
      return run(plan, null);
    }
    if (found.value !== null) {
      cache.metrics.hits.inc();
      return answer(found.value);
    }
    cache.metrics.misses.inc();
    const key = `${base}:${found.generations}`;
    const running = cache.flight(key);
    if (running !== undefined) {
      cache.metrics.joins.inc();
      return void running.then((response) => {
        if (s.closed) return;
        // the running miss was not storable (an error, too big, cut short): this one runs itself
        if (response === null) run(onPrimary, null);
        else answer(response);
      });
    }
    // fills read the primary: a lagging replica's rows stored under the new generations would outlive the lag
    run(onPrimary, fillHold(s, store, base, found.generations, fingerprint, cache.startFlight(key)));
  });
  return true;
}

function fillHold(s: CacheSession, store: NonNullable<ReturnType<EdgeContext['cache']['usable']>>, base: string, generations: string, fingerprint: string, done: (r: Buffer | null) => void): ResponseHold {
  const slices: Buffer[] = [];
  return {
    slices,
    settle(summary: ResponseSummary, inTx: boolean): Promise<Buffer> {
      const response = Buffer.concat(slices);
      const storable = summary.err === null && !inTx && response.length <= s.edge.cache.settings.maxEntryBytes;
      done(storable ? response : null);
      if (storable) void s.edge.cache.fill(store, base, generations, fingerprint, response);
      return Promise.resolve(response);
    },
    abandon: () => done(null),
  };
}

/**
 * The hold that bumps the cached tables a statement writes (or, at COMMIT, the ones its
 * transaction wrote) before the client gets its answer; `inner` is fanout's hold, if any.
 */
export function invalidationHold(s: CacheSession, c: Classification, inner: ResponseHold | null): ResponseHold | null {
  const cache = s.edge.cache;
  if (!cache.configured) return inner;
  const written = writtenTables(c, s.schema, cache.settings);
  const transaction = inTransaction(s);
  if (ROLLBACKS.has(c.transaction)) s.cacheWrites = null;
  const commits = COMMITS.has(c.transaction) && s.cacheWrites !== null;
  if (written.length === 0 && !commits) return inner;
  const tables = new Set(written);
  if (commits) for (const t of s.cacheWrites as Set<string>) tables.add(t);
  if (transaction && !commits && written.length > 0) for (const t of written) (s.cacheWrites ??= new Set()).add(t);
  if (commits) s.cacheWrites = null;
  const slices = inner?.slices ?? [];
  return {
    slices,
    async settle(summary: ResponseSummary, inTx: boolean): Promise<Buffer> {
      const response = inner !== null ? await inner.settle(summary, inTx) : Buffer.concat(slices);
      // bumping a table that did not change only costs its entries a refill
      await cache.invalidate([...tables].sort());
      return response;
    },
    abandon: () => {
      inner?.abandon?.();
      // the statement's outcome is unknown (connection lost): bump anyway, without holding anyone
      void cache.invalidate([...tables].sort());
    },
  };
}
