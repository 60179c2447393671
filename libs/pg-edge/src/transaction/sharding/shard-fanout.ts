// A keyless read with multi_shard = "all_shards": the query runs on every shard (a replica when the
// read is replica-safe), and the client gets one RowDescription, every shard's DataRows in shard
// order, and one CommandComplete with the summed row count. Any shard's error is the answer.
import { Buffer } from 'node:buffer';
import { BackendCode, encodeBackendMessages, encodeFrontendMessages, type Frame } from '@dbproxy/protocol-pg';
import type { EdgeEpoch } from '../../edge-context';
import { PgEdgeErrors, toErrorResponse } from '../../errors';
import { sendCancelRequest } from '../../backend-socket';
import type { PgBackendConnection } from '../backend-connection';
import type { PgLease, TransactionPools } from '../backend-pools';
import { carriedType } from '../response-relay';
import type { SoleExecution } from '../batch-plan';
import { exchangeBytes, ExchangeTooLarge, type ExchangeAnswer } from './backend-exchange';

/** The read: a simple query's text, or one extended-protocol execution (the client's Bind re-aimed at the unnamed statement). */
export type FanoutStatement =
  | { readonly kind: 'simple'; readonly sql: string }
  | { readonly kind: 'extended'; readonly execution: SoleExecution };

export interface FanoutRequest {
  readonly statement: FanoutStatement;
  readonly shards: readonly string[];
  readonly replica: boolean;
}

/**
 * The running read's cancel: a client CancelRequest, or query_timeout_seconds over the whole read,
 * sends a real CancelRequest for the shard being read (its connection is never lent again).
 */
export class FanoutCancel {
  private current: PgBackendConnection | undefined;
  private requested = false;

  running(conn: PgBackendConnection | undefined): void {
    this.current = conn;
  }

  cancel(): void {
    this.requested = true;
    const conn = this.current;
    if (!conn || conn.cancelled) return;
    conn.cancelled = true;
    void sendCancelRequest(conn.address, conn.processId, conn.secretKey);
  }

  get wasRequested(): boolean {
    return this.requested;
  }
}

/** What each shard is sent, and what the client is shown before the rows. */
function requestOf(statement: FanoutStatement): { bytes: Buffer; prefix: Buffer[]; showDescription: boolean } {
  if (statement.kind === 'simple') return { bytes: encodeFrontendMessages({ type: 'Query', sql: statement.sql }), prefix: [], showDescription: true };
  const { statement: prepared, bind, parsed, described } = statement.execution;
  const bytes = encodeFrontendMessages(
    { type: 'Parse', statement: '', sql: prepared.sql, paramTypes: prepared.inferred ?? prepared.paramTypes },
    { ...bind, portal: '', statement: '' },
    { type: 'Describe', kind: 'P', name: '' },
    { type: 'Execute', portal: '', maxRows: 0 },
    { type: 'Sync' },
  );
  const prefix = [...(parsed ? [encodeBackendMessages({ type: 'ParseComplete' })] : []), encodeBackendMessages({ type: 'BindComplete' })];
  return { bytes, prefix, showDescription: described };
}

/** What the client receives before ReadyForQuery; `failed` when it is a shard's ErrorResponse. */
export interface FanoutAnswer {
  readonly bytes: Buffer;
  readonly failed: boolean;
}

/** Runs the read on each shard in turn (the first error is the answer). */
export async function readOnEveryShard(epoch: EdgeEpoch, pools: TransactionPools, request: FanoutRequest, cancel: FanoutCancel): Promise<FanoutAnswer> {
  const { bytes, prefix, showDescription } = requestOf(request.statement);
  const pg = epoch.config.postgres;
  const answers: ExchangeAnswer[] = [];
  for (const shard of request.shards) {
    if (cancel.wasRequested) throw PgEdgeErrors.queryCanceled();
    const choice = epoch.directory.require(shard, request.replica ? 'replica' : 'primary', pools, pg.fallback_to_primary);
    const target = choice.target as NonNullable<typeof choice.target>;
    const lease: PgLease = await pools.acquire(target.config.name, false);
    lease.connection.unnamedHolds = undefined; // the unnamed statement is replaced below
    let reusable = false;
    cancel.running(lease.connection);
    try {
      const answer = await exchangeBytes(lease.connection, bytes, { maxBytes: pg.max_result_bytes });
      reusable = answer.status === 0x49 && !lease.connection.cancelled; // 'I'
      if (answer.error) return { bytes: answer.error.bytes, failed: true };
      answers.push(answer);
    } catch (err) {
      if (err instanceof ExchangeTooLarge) {
        reusable = true;
        throw PgEdgeErrors.resultTooLarge('max_result_bytes', pg.max_result_bytes);
      }
      throw PgEdgeErrors.backendLost(target.config.name);
    } finally {
      cancel.running(undefined);
      pools.release(lease, reusable, reusable ? undefined : 'fanout-failed');
    }
  }
  return merged(answers, pg.max_result_rows, prefix, showDescription);
}

const failure = (error: Error): FanoutAnswer => ({ bytes: encodeBackendMessages(toErrorResponse(error)), failed: true });

function merged(answers: readonly ExchangeAnswer[], maxRows: number, prefix: readonly Buffer[], showDescription: boolean): FanoutAnswer {
  const out: Buffer[] = [...prefix];
  let description: Frame | undefined;
  let rows = 0;
  let tag = 'SELECT';
  for (const answer of answers) {
    for (const frame of answer.frames) {
      if (frame.code === BackendCode.RowDescription) {
        if (description === undefined) {
          const oid = uncarriedColumn(frame.payload);
          if (oid >= 0) return failure(PgEdgeErrors.unsupportedType(oid, 'result column'));
          description = frame;
          if (showDescription) out.push(frame.bytes);
        }
      } else if (frame.code === BackendCode.NoData) {
        if (description === undefined && showDescription) out.push(frame.bytes);
        description ??= frame;
      } else if (frame.code === BackendCode.DataRow) {
        if (++rows > maxRows) return failure(PgEdgeErrors.resultTooLarge('max_result_rows', maxRows));
        out.push(frame.bytes);
      } else if (frame.code === BackendCode.CommandComplete) {
        tag = frame.payload.toString('utf8', 0, frame.payload.length - 1).replace(/\s\d+$/, '');
      } else if (frame.code === BackendCode.NoticeResponse) out.push(frame.bytes);
    }
  }
  out.push(encodeBackendMessages({ type: 'CommandComplete', tag: `${tag} ${rows}` }));
  return { bytes: Buffer.concat(out), failed: false };
}

function uncarriedColumn(payload: Buffer): number {
  const count = payload.readInt16BE(0);
  let at = 2;
  for (let i = 0; i < count; i++) {
    at = payload.indexOf(0, at) + 1;
    const oid = payload.readUInt32BE(at + 6);
    if (!carriedType(oid)) return oid;
    at += 18;
  }
  return -1;
}
