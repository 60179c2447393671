// With statement sharding a transaction runs on the shard of its first statement that needs a
// backend, which BEGIN does not tell: a simple-query BEGIN is answered here and sent, as written,
// to that shard's connection just before the first statement. COMMIT/ROLLBACK of a transaction
// that ran nothing are answered here too; after a refusal the transaction is aborted, as in PostgreSQL.
import { Buffer } from 'node:buffer';
import { encodeBackendMessages } from '@dbproxy/protocol-pg';
import type { SqlRoute } from '@dbproxy/sql';
import { PgEdgeErrors, toErrorResponse } from '../../errors';

const IDLE = 'I';
const IN_TRANSACTION = 'T';
const FAILED = 'E';

export class DeferredBegin {
  /** The BEGIN text waiting for the transaction's first statement. */
  private text: string | undefined;
  private failed = false;

  /** A transaction was opened here and has not reached a backend yet. */
  get pending(): boolean {
    return this.text !== undefined;
  }

  /** The status byte to report while no backend holds the transaction. */
  get status(): number {
    return (this.failed ? FAILED : this.text !== undefined ? IN_TRANSACTION : IDLE).charCodeAt(0);
  }

  /** The BEGIN to send before the first statement (and forget). */
  take(): string | undefined {
    const text = this.text;
    this.text = undefined;
    return text;
  }

  /** A refusal while no backend holds the session: inside the pending transaction it aborts it. The status to report. */
  refusedStatus(): number {
    if (this.text !== undefined) this.failed = true;
    return this.status;
  }

  /** The answer to a simple query the session holds no connection for, when it is answered here. */
  answer(route: SqlRoute, sql: string): Buffer | undefined {
    const c = route.classification;
    if (c.statementCount !== 1) return this.failed ? this.aborted() : undefined;
    if (c.transaction === 'begin' && c.family === 'transaction') {
      if (this.text === undefined) this.text = sql;
      return reply('BEGIN', IN_TRANSACTION);
    }
    if (this.text === undefined) return undefined;
    if (c.transaction === 'commit' || c.transaction === 'rollback') {
      const tag = this.failed || c.transaction === 'rollback' ? 'ROLLBACK' : 'COMMIT';
      this.text = undefined;
      this.failed = false;
      return reply(tag, IDLE);
    }
    return this.failed ? this.aborted() : undefined;
  }

  /** A unit other than COMMIT/ROLLBACK while the pending transaction is aborted. */
  abortedError(): Error | undefined {
    return this.failed ? PgEdgeErrors.transactionAborted() : undefined;
  }

  private aborted(): Buffer {
    return Buffer.concat([encodeBackendMessages(toErrorResponse(PgEdgeErrors.transactionAborted())), readyBytes(FAILED)]);
  }
}

function reply(tag: string, status: string): Buffer {
  return Buffer.concat([encodeBackendMessages({ type: 'CommandComplete', tag }), readyBytes(status)]);
}

function readyBytes(status: string): Buffer {
  return Buffer.from([0x5a, 0, 0, 0, 5, status.charCodeAt(0)]); // 'Z'
}
