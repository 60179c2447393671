// A keyless read with multi_shard = "all_shards": the query runs on every shard (a replica when the
// read is replica-safe), and the client gets one RowDescription, every shard's DataRows in shard
// order, and one CommandComplete with the summed row count. Any shard's error is the answer.
import { BackendCode, encodeBackendMessages, type Frame } from '@dbproxy/protocol-pg';
import type { EdgeEpoch } from '../../edge-context';
import { PgEdgeErrors, toErrorResponse } from '../../errors';
import type { PgLease, TransactionPools } from '../backend-pools';
import { carriedType } from '../response-relay';
import { exchange, ExchangeTooLarge, type ExchangeAnswer } from './backend-exchange';

export interface FanoutRequest {
  readonly sql: string;
  readonly shards: readonly string[];
  readonly replica: boolean;
}

/** Runs the read on each shard in turn; resolves with what the client receives before ReadyForQuery. */
export async function readOnEveryShard(epoch: EdgeEpoch, pools: TransactionPools, request: FanoutRequest): Promise<Buffer> {
  const pg = epoch.config.postgres;
  const answers: ExchangeAnswer[] = [];
  for (const shard of request.shards) {
    const choice = epoch.directory.require(shard, request.replica ? 'replica' : 'primary', pools, pg.fallback_to_primary);
    const target = choice.target as NonNullable<typeof choice.target>;
    const lease: PgLease = await pools.acquire(target.config.name, false);
    let reusable = false;
    try {
      const answer = await exchange(lease.connection, request.sql, { maxBytes: pg.max_result_bytes });
      reusable = answer.status === 0x49; // 'I'
      if (answer.error) return answer.error.bytes;
      answers.push(answer);
    } catch (err) {
      if (err instanceof ExchangeTooLarge) {
        reusable = true;
        throw PgEdgeErrors.resultTooLarge('max_result_bytes', pg.max_result_bytes);
      }
      throw PgEdgeErrors.backendLost(target.config.name);
    } finally {
      pools.release(lease, reusable, reusable ? undefined : 'fanout-failed');
    }
  }
  return merged(answers, pg.max_result_rows);
}

function merged(answers: readonly ExchangeAnswer[], maxRows: number): Buffer {
  const out: Buffer[] = [];
  let description: Frame | undefined;
  let rows = 0;
  let tag = 'SELECT';
  for (const answer of answers) {
    for (const frame of answer.frames) {
      if (frame.code === BackendCode.RowDescription) {
        if (description === undefined) {
          const oid = uncarriedColumn(frame.payload);
          if (oid >= 0) return encodeBackendMessages(toErrorResponse(PgEdgeErrors.unsupportedType(oid, 'result column')));
          description = frame;
          out.push(frame.bytes);
        }
      } else if (frame.code === BackendCode.DataRow) {
        if (++rows > maxRows) return encodeBackendMessages(toErrorResponse(PgEdgeErrors.resultTooLarge('max_result_rows', maxRows)));
        out.push(frame.bytes);
      } else if (frame.code === BackendCode.CommandComplete) {
        tag = frame.payload.toString('utf8', 0, frame.payload.length - 1).replace(/\s\d+$/, '');
      } else if (frame.code === BackendCode.NoticeResponse) out.push(frame.bytes);
    }
  }
  out.push(encodeBackendMessages({ type: 'CommandComplete', tag: `${tag} ${rows}` }));
  return Buffer.concat(out);
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
