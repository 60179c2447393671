// Merging the replies of a command split over shards or sent to every shard: key order (MGET),
// sums, minimum, maximum, logical and/or, all or one succeeded, collected arrays (KEYS).
import { Buffer } from 'node:buffer';
import { aggregateElements, encodeInteger, readIntegerReply, RespType, ReplyScanner } from '@dbproxy/resp';
import { RequestPolicy, ResponsePolicy } from './command-flags';
import type { CommandSpec } from './command-table';

export const Merge = {
  /** MGET: every part's array elements back at their keys' places. */
  KeyOrder: 0,
  Sum: 1,
  Min: 2,
  Max: 3,
  LogicalAnd: 4,
  LogicalOr: 5,
  /** The first reply when none is an error (OK). */
  AllSucceeded: 6,
  /** The first reply that is not an error. */
  OneSucceeded: 7,
  /** Arrays concatenated (KEYS); other replies: the first that is not null (RANDOMKEY). */
  Collect: 8,
  /** RANDOMKEY: a non-null reply chosen uniformly at random (null when every shard is empty). */
  AnyNonNull: 9,
} as const;

/** How the replies of a command's parts combine, by COMMAND INFO's response policy. */
export const RESPONSE_MERGE: Readonly<Record<number, number>> = {
  [ResponsePolicy.AggSum]: Merge.Sum,
  [ResponsePolicy.AggMin]: Merge.Min,
  [ResponsePolicy.AggMax]: Merge.Max,
  [ResponsePolicy.AggLogicalAnd]: Merge.LogicalAnd,
  [ResponsePolicy.AggLogicalOr]: Merge.LogicalOr,
  [ResponsePolicy.AllSucceeded]: Merge.AllSucceeded,
  [ResponsePolicy.OneSucceeded]: Merge.OneSucceeded,
};

/** The merge of a command split by its keys (MGET: key order; DEL: sum; MSET: all succeeded). */
export function multiKeyMerge(spec: CommandSpec): number {
  return spec.requestPolicy === RequestPolicy.MultiShard ? (RESPONSE_MERGE[spec.responsePolicy] ?? Merge.KeyOrder) : Merge.AllSucceeded;
}

export const MERGE_NAMES = ['key_order', 'sum', 'min', 'max', 'logical_and', 'logical_or', 'all_succeeded', 'one_succeeded', 'collect', 'any_non_null'] as const;

function isError(reply: Buffer): boolean {
  return reply[0] === RespType.Error || reply[0] === RespType.BulkError;
}

function isNull(reply: Buffer): boolean {
  return reply[0] === RespType.Null || (reply.length === 5 && (reply[0] === RespType.Bulk || reply[0] === RespType.Array) && reply[1] === 0x2d);
}

function isAggregate(reply: Buffer): boolean {
  return (reply[0] === RespType.Array || reply[0] === RespType.Set) && !isNull(reply);
}

/** The elements of an aggregate reply as views. */
function elementsOf(reply: Buffer, scanner: ReplyScanner): Buffer[] {
  const batch = aggregateElements(reply, 0, reply.length, scanner);
  const out: Buffer[] = [];
  for (let i = 0; i < batch.count; i++) out.push(batch.frame(i));
  return out;
}

function aggregate(type: number, items: readonly Buffer[]): Buffer {
  return Buffer.concat([Buffer.from(`${String.fromCharCode(type)}${items.length}\r\n`), ...items]);
}

function integers(replies: readonly Buffer[], fold: (a: number, b: number) => number): Buffer {
  let acc = readIntegerReply(replies[0], 0, replies[0].length);
  for (let p = 1; p < replies.length; p++) acc = fold(acc, readIntegerReply(replies[p], 0, replies[p].length));
  return Number.isNaN(acc) ? replies[0] : encodeInteger(acc);
}

function logical(replies: readonly Buffer[], and: boolean, scanner: ReplyScanner): Buffer {
  const truth = (b: Buffer): boolean => readIntegerReply(b, 0, b.length) !== 0;
  const combine = (a: boolean, b: boolean): boolean => (and ? a && b : a || b);
  if (!isAggregate(replies[0])) return encodeInteger(replies.map(truth).reduce(combine) ? 1 : 0);
  const columns = replies.map((r) => elementsOf(r, scanner).map(truth));
  const width = columns[0].length;
  const merged = Array.from({ length: width }, (_, i) => columns.map((c) => c[i] ?? !and).reduce(combine));
  return aggregate(RespType.Array, merged.map((v) => encodeInteger(v ? 1 : 0)));
}

/**
 * Merges part replies (in part order). An error in any part is the result, except for
 * OneSucceeded. `keyOrder[p]` lists, for KeyOrder, the key ordinals part p asked for.
 */
export function mergeReplies(merge: number, replies: readonly Buffer[], keyOrder?: readonly (readonly number[])[], keyCount = 0): Buffer {
  const firstError = replies.find(isError);
  if (merge === Merge.OneSucceeded) return replies.find((r) => !isError(r)) ?? replies[0];
  if (firstError) return firstError;
  const scanner = new ReplyScanner();
  switch (merge) {
    case Merge.KeyOrder: {
      const items = new Array<Buffer>(keyCount);
      replies.forEach((reply, p) => elementsOf(reply, scanner).forEach((item, j) => (items[keyOrder?.[p]?.[j] ?? j] = item)));
      return aggregate(RespType.Array, items);
    }
    case Merge.Sum:
      return integers(replies, (a, b) => a + b);
    case Merge.Min:
      return integers(replies, Math.min);
    case Merge.Max:
      return integers(replies, Math.max);
    case Merge.LogicalAnd:
    case Merge.LogicalOr:
      return logical(replies, merge === Merge.LogicalAnd, scanner);
    case Merge.Collect:
      if (replies.every(isAggregate)) return aggregate(replies[0][0], replies.flatMap((r) => elementsOf(r, scanner)));
      return replies.find((r) => !isNull(r)) ?? replies[0];
    case Merge.AnyNonNull: {
      const present = replies.filter((r) => !isNull(r));
      return present.length === 0 ? replies[0] : present[Math.floor(Math.random() * present.length)];
    }
    default:
      return replies[0];
  }
}
