// Zero-copy helpers for merging fan-out replies: integer values and the element slices of an aggregate.
import { decimalWidth, LENGTH_INCOMPLETE, parseDecimal, readLength } from './digits';
import { IncompleteReply, TrailingBytes } from './errors';
import type { ReplyBatch } from './reply-batch';
import { ReplyScanner } from './reply-scanner';
import { Ascii, RespType } from './wire';

/** The value of an integer reply `:<n>\r\n` in [start, end), or NaN when it is not one (or not a safe integer). */
export function readIntegerReply(buf: Buffer, start: number, end: number): number {
  if (buf[start] !== RespType.Integer || end - start < 4 || buf[end - 2] !== Ascii.CR) return NaN;
  return parseDecimal(buf, start + 1, end - 2);
}

/**
 * Splits a complete array/set/push/map reply in [start, end) into its top-level elements
 * (a map yields key, value, key, value ...): returns `scanner.batch`, whose frame(i) are
 * views of `buf`, ready to be re-framed under a new header (MGET merging). Use a scanner
 * dedicated to this, not the connection's. Null and non-aggregate replies yield no elements.
 */
export function aggregateElements(buf: Buffer, start: number, end: number, scanner: ReplyScanner): ReplyBatch {
  const type = buf[start];
  scanner.reset();
  const isAggregate = type === RespType.Array || type === RespType.Set || type === RespType.Push || type === RespType.Map;
  const n = isAggregate ? readLength(buf, start + 1, end) : -1;
  if (n === LENGTH_INCOMPLETE) throw IncompleteReply();
  if (n < 0) return scanner.scan(buf, start, start);
  const headerEnd = start + 1 + decimalWidth(n) + 2;
  const batch = scanner.scan(buf, headerEnd, end);
  const expected = type === RespType.Map ? n * 2 : n;
  if (batch.count < expected) throw IncompleteReply();
  const used = expected === 0 ? headerEnd : batch.end[expected - 1];
  if (used !== end) throw TrailingBytes(end - used);
  return batch;
}
