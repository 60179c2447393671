// One simple Query on a pooled connection outside the session's relay, its answers collected up to
// ReadyForQuery: the deferred BEGIN of a transaction, and each shard's part of a read on every shard.
import { Buffer } from 'node:buffer';
import { BackendCode, decodeBackendMessage, encodeFrontendMessages, type Frame } from '@dbproxy/protocol-pg';
import type { BackendConsumer, PgBackendConnection } from '../backend-connection';

export interface ExchangeAnswer {
  /** Every frame before ReadyForQuery. */
  readonly frames: Frame[];
  /** The first ErrorResponse's frame, if any. */
  readonly error: Frame | undefined;
  readonly status: number;
}

export interface ExchangeLimits {
  /** Bytes of answers held before the exchange fails (max_result_bytes). */
  readonly maxBytes: number;
}

/** Sends `sql` as a simple Query on `conn` and collects its answers; rejects when the connection is lost or the answer is too large. */
export function exchange(conn: PgBackendConnection, sql: string, limits: ExchangeLimits): Promise<ExchangeAnswer> {
  return exchangeBytes(conn, encodeFrontendMessages({ type: 'Query', sql }), limits);
}

/** Sends `request` (ending in a Query or Sync) on `conn` and collects the answers up to ReadyForQuery. */
export function exchangeBytes(conn: PgBackendConnection, request: Buffer, limits: ExchangeLimits): Promise<ExchangeAnswer> {
  return new Promise<ExchangeAnswer>((resolve, reject) => {
    const frames: Frame[] = [];
    let error: Frame | undefined;
    let bytes = 0;
    let failure: Error | undefined;
    const consumer: BackendConsumer = {
      onFrame: (frame) => {
        if (frame.code === BackendCode.ReadyForQuery) {
          conn.detach(consumer);
          conn.noteStatus(frame.payload[0]);
          if (failure) return reject(failure);
          return resolve({ frames, error, status: frame.payload[0] });
        }
        if (failure) return;
        if (frame.code === BackendCode.ErrorResponse) error ??= frame;
        bytes += frame.bytes.length;
        if (bytes > limits.maxBytes) {
          failure = new ExchangeTooLarge();
          frames.length = 0;
          return;
        }
        const copy = Buffer.from(frame.bytes); // the framer's buffers are reused after this read
        // a frame of its own: not a range of the read (which a spread would carry over)
        frames.push({ kind: frame.kind, code: frame.code, bytes: copy, payload: copy.subarray(copy.length - frame.payload.length) });
      },
      onChunkEnd: () => undefined,
      onLost: (err) => reject(err),
    };
    conn.attach(consumer);
    conn.write(request);
  });
}

/** The answer outgrew ExchangeLimits.maxBytes. */
export class ExchangeTooLarge extends Error {
  constructor() {
    super('the answer exceeds max_result_bytes');
  }
}

/** The message of an ErrorResponse frame, for logs. */
export function errorText(frame: Frame): string {
  const message = decodeBackendMessage(frame);
  return message.type === 'ErrorResponse' ? `${message.code} ${message.message}` : 'error';
}
