// A session's side of fanout: which responses the edge holds back (a DML on a fanout table, the
// end of a transaction that queued copies, SHOW WARNINGS after a failed copy), the copies queued
// inside the client's transaction until its COMMIT (in order; dropped on ROLLBACK, on ROLLBACK TO
// a savepoint taken before them, on a deadlock and when the session ends), and the warnings of the
// last statement's failed copies.
import { Buffer } from 'node:buffer';
import type { ResponseSummary } from '@dbproxy/protocol-mysql';
import type { Classification, TransactionEffect } from '@dbproxy/sql';
import type { DbproxyError } from '@dbproxy/util';
import { MysqlEdgeErrors } from '../errors';
import type { CopyStatement } from './copy-statement';
import type { FanoutCoordinator } from './fanout-coordinator';
import type { CopyFailure } from './fanout-path';
import { matchingRules, type FanoutRule } from './fanout-rules';
import { addWarnings, isShowWarnings, mergeWarnings, warningOf, type WarningRow } from './fanout-warnings';

/** A response the edge holds back from the client until it knows what the client gets. */
export interface ResponseHold {
  /** Copies of the forwarded bytes, appended by the exchange. */
  readonly slices: Buffer[];
  /** The response ended (`inTransaction`: the server holds a transaction after it): resolves, never rejects, with the client's bytes. */
  settle(summary: ResponseSummary, inTransaction: boolean): Promise<Buffer>;
  /** The command ended without a response to settle (backend ERR before it ran, lost connection): the result cache's holds release their waiters. */
  abandon?(): void;
}

/** What the hold of one statement needs to know at dispatch. */
export interface HoldRequest {
  readonly classification: Classification;
  readonly rules: readonly FanoutRule[];
  /** The COM_QUERY text (null for an execute). */
  readonly sql: string | null;
  readonly schema: string | null;
  /** The session holds a transaction (pinned by BEGIN, autocommit = 0...). */
  readonly inTransaction: boolean;
  readonly ownShard: string;
  readonly profile: number;
  /** The copy of the statement, made only when it matches a fanout. */
  copy(): CopyStatement;
}

interface QueuedCopy {
  readonly rule: FanoutRule;
  readonly statement: CopyStatement;
  readonly ownShard: string;
}

/** Statements after which queued copies may have to go (or go away). */
const BOUNDARIES: ReadonlySet<TransactionEffect> = new Set([
  'begin',
  'commit',
  'rollback',
  'commit_and_chain',
  'rollback_and_chain',
  'savepoint',
  'release_savepoint',
  'rollback_to_savepoint',
  'autocommit_on',
  'implicit_commit',
]);

/** Tracked whenever fanouts are configured: a ROLLBACK TO may come after copies queued later. */
const SAVEPOINTS: ReadonlySet<TransactionEffect> = new Set(['savepoint', 'release_savepoint', 'rollback_to_savepoint']);

const ER_LOCK_DEADLOCK = 1213;

export class SessionFanout {
  private queue: QueuedCopy[] = [];
  private queuedBytes = 0;
  private savepoints: Map<string, number> | null = null;
  /** The failed copies of the last statement, as SHOW WARNINGS rows; cleared by the next statement. */
  warnings: WarningRow[] | null = null;

  constructor(
    private readonly coordinator: FanoutCoordinator,
    private readonly session: number,
  ) {}

  /** At dispatch: the hold for the statement's response, an error refusing it, or null (forwarded as usual). */
  holdFor(r: HoldRequest): ResponseHold | DbproxyError | null {
    if (r.sql !== null && this.warnings !== null && isShowWarnings(r.sql)) return this.showWarnings(this.warnings);
    this.warnings = null;
    const c = r.classification;
    const match = matchingRules(r.rules, c, r.schema);
    if (match.ambiguous.length > 0) return MysqlEdgeErrors.fanoutAmbiguous(match.ambiguous.map((m) => m.table).join(', '));
    if (match.rules.length > 0) return this.statementHold(r, match.rules);
    const queued = this.queue.length > 0;
    if ((BOUNDARIES.has(c.transaction) && (queued || SAVEPOINTS.has(c.transaction))) || (c.family === 'ddl' && queued)) return this.boundaryHold(c, r.sql, r.profile);
    // anything but a plain read while copies wait: if the server says the transaction is gone after it, it went without a COMMIT
    if (queued && !c.replicaSafe) return this.hold((response, summary, inTransaction) => Promise.resolve(this.endedUnseen(response, summary, inTransaction)), r.profile);
    return null;
  }

  /** The session ended, or COM_RESET_CONNECTION / COM_CHANGE_USER rolled its transaction back. */
  reset(): void {
    this.discard(0);
    this.warnings = null;
  }

  private statementHold(r: HoldRequest, matched: readonly FanoutRule[]): ResponseHold | DbproxyError {
    if (r.classification.statementCount > 1) return MysqlEdgeErrors.fanoutMultiStatement(matched.map((m) => m.name).join('", "'));
    const copy = r.copy();
    if (r.inTransaction) {
      const bound = Math.min(...matched.map((m) => m.maxTransactionBytes));
      if (this.queuedBytes + copy.bytes * matched.length > bound) return MysqlEdgeErrors.fanoutTransactionTooLarge(bound);
    }
    return this.hold(async (response, summary, inTransaction) => {
      this.endedUnseen(response, summary, inTransaction);
      if (summary.err !== null) return response;
      if (inTransaction) {
        for (const rule of matched) this.queue.push({ rule, statement: copy, ownShard: r.ownShard });
        this.queuedBytes += copy.bytes * matched.length;
        return response;
      }
      return this.withFailures(response, await this.send(matched.map((rule) => ({ rule, statement: copy, ownShard: r.ownShard })), r.profile));
    }, r.profile);
  }

  /**
   * With copies queued: a deadlock (1213) rolled the transaction back; and when the server reports
   * no transaction after a statement that neither committed nor rolled back in the edge's eyes, the
   * transaction ended on the server's own (a rollback after an error, such as a lock wait timeout
   * with innodb_rollback_on_timeout): either way its copies go away.
   */
  private endedUnseen(response: Buffer, summary: ResponseSummary, inTransaction: boolean): Buffer {
    if (this.queue.length === 0) return response;
    if (summary.err === null ? !inTransaction : summary.err.code === ER_LOCK_DEADLOCK) this.discard(0);
    return response;
  }

  private boundaryHold(c: Classification, sql: string | null, profile: number): ResponseHold {
    const effect = c.transaction;
    return this.hold(async (response, summary, inTransaction, profile) => {
      const ok = summary.err === null;
      switch (effect) {
        case 'savepoint':
        case 'release_savepoint':
        case 'rollback_to_savepoint':
          if (ok) this.savepoint(effect, sql);
          return response;
        case 'rollback':
        case 'rollback_and_chain':
          this.discard(0);
          return response;
        case 'commit':
        case 'commit_and_chain':
        case 'autocommit_on':
          if (!ok) {
            if (effect !== 'autocommit_on') this.discard(0);
            return response;
          }
          if (inTransaction && effect !== 'commit_and_chain') return response;
          return this.withFailures(response, await this.flush(profile));
        default:
          // BEGIN, DDL, LOCK TABLES: the open transaction was committed before the statement ran, even when it failed
          return this.withFailures(response, await this.flush(profile));
      }
    }, profile);
  }

  private hold(settle: (response: Buffer, summary: ResponseSummary, inTransaction: boolean, profile: number) => Promise<Buffer>, profile: number): ResponseHold {
    const slices: Buffer[] = [];
    return {
      slices,
      settle: async (summary, inTransaction) => {
        const response = Buffer.concat(slices);
        try {
          return await settle(response, summary, inTransaction, profile);
        } catch {
          return response; // copies never cost the client its answer
        }
      },
    };
  }

  private showWarnings(rows: readonly WarningRow[]): ResponseHold {
    return this.hold((response, summary) => Promise.resolve(summary.err === null ? mergeWarnings(response, rows) : response), 0);
  }

  /** SAVEPOINT name / RELEASE SAVEPOINT name / ROLLBACK TO [SAVEPOINT] name, by the queue position at the savepoint. */
  private savepoint(effect: TransactionEffect, sql: string | null): void {
    const name = sql === null ? null : savepointName(sql);
    if (name === null) return;
    const savepoints = (this.savepoints ??= new Map());
    if (effect === 'savepoint') savepoints.set(name, this.queue.length);
    else if (effect === 'release_savepoint') savepoints.delete(name);
    else {
      const at = savepoints.get(name);
      if (at !== undefined) this.discard(at);
    }
  }

  /** Drops the queued copies from position `from` on (0: all), counting them as discarded. */
  private discard(from: number): void {
    const dropped = this.queue.splice(from);
    for (const q of dropped) {
      this.queuedBytes -= q.statement.bytes;
      this.coordinator.discarded(q.rule, q.ownShard, 1);
    }
    if (from === 0) {
      this.queuedBytes = 0;
      this.savepoints = null;
    }
  }

  /** The transaction committed: its copies go, in order per fanout. */
  private flush(profile: number): Promise<CopyFailure[]> {
    const queued = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    this.savepoints = null;
    return this.send(queued, profile);
  }

  /** One batch per fanout (and own shard), statements in their order; every batch runs at once. */
  private async send(copies: readonly QueuedCopy[], profile: number): Promise<CopyFailure[]> {
    if (copies.length === 0) return [];
    const batches = new Map<string, { rule: FanoutRule; ownShard: string; statements: CopyStatement[] }>();
    for (const q of copies) {
      const key = `${q.rule.name}\u0000${q.ownShard}`;
      let batch = batches.get(key);
      if (batch === undefined) batches.set(key, (batch = { rule: q.rule, ownShard: q.ownShard, statements: [] }));
      batch.statements.push(q.statement);
    }
    const runs = [...batches.values()].map((b) => this.coordinator.run({ ...b, profile, session: this.session }));
    return (await Promise.all(runs)).flat();
  }

  private withFailures(response: Buffer, failures: readonly CopyFailure[]): Buffer {
    if (failures.length === 0) return response;
    this.warnings = failures.map(warningOf);
    addWarnings(response, failures.length);
    return response;
  }
}

/** The savepoint a SAVEPOINT / RELEASE SAVEPOINT / ROLLBACK TO statement names (identifiers compare case-insensitively). */
export function savepointName(sql: string): string | null {
  const m = /\bsavepoint\s+(`(?:[^`]|``)+`|[^\s;]+)|\bto\s+(`(?:[^`]|``)+`|[^\s;]+)\s*;?\s*$/i.exec(sql);
  const raw = m?.[1] ?? m?.[2];
  if (raw === undefined) return null;
  return (raw.startsWith('`') ? raw.slice(1, -1).replace(/``/g, '`') : raw).toLowerCase();
}
