// Merging part replies: key order, sums, min/max, logical and/or, all/one succeeded, collect.
import { Merge, mergeReplies } from './merge';

const b = (text: string): Buffer => Buffer.from(text);
const text = (buf: Buffer): string => buf.toString();

describe('merging part replies', () => {
  it('puts MGET elements back at their keys positions', () => {
    const parts = [b('*2\r\n$1\r\na\r\n$-1\r\n'), b('*1\r\n$1\r\nb\r\n')];
    expect(text(mergeReplies(Merge.KeyOrder, parts, [[0, 2], [1]], 3))).toBe('*3\r\n$1\r\na\r\n$1\r\nb\r\n$-1\r\n');
  });

  it('sums, takes the minimum or maximum of integer replies', () => {
    const parts = [b(':3\r\n'), b(':5\r\n'), b(':0\r\n')];
    expect(text(mergeReplies(Merge.Sum, parts))).toBe(':8\r\n');
    expect(text(mergeReplies(Merge.Min, parts))).toBe(':0\r\n');
    expect(text(mergeReplies(Merge.Max, parts))).toBe(':5\r\n');
  });

  it('combines logical replies, element by element for arrays (SCRIPT EXISTS)', () => {
    expect(text(mergeReplies(Merge.LogicalAnd, [b('*2\r\n:1\r\n:0\r\n'), b('*2\r\n:1\r\n:1\r\n')]))).toBe('*2\r\n:1\r\n:0\r\n');
    expect(text(mergeReplies(Merge.LogicalOr, [b('*2\r\n:1\r\n:0\r\n'), b('*2\r\n:0\r\n:0\r\n')]))).toBe('*2\r\n:1\r\n:0\r\n');
    expect(text(mergeReplies(Merge.LogicalAnd, [b(':1\r\n'), b(':0\r\n')]))).toBe(':0\r\n');
  });

  it('returns the first error unless one success is enough', () => {
    const parts = [b('+OK\r\n'), b('-ERR no\r\n'), b('-ERR again\r\n')];
    expect(text(mergeReplies(Merge.AllSucceeded, parts))).toBe('-ERR no\r\n');
    expect(text(mergeReplies(Merge.Sum, [b(':1\r\n'), b('-WRONGTYPE x\r\n')]))).toBe('-WRONGTYPE x\r\n');
    expect(text(mergeReplies(Merge.OneSucceeded, parts))).toBe('+OK\r\n');
    expect(text(mergeReplies(Merge.OneSucceeded, [b('-ERR a\r\n'), b('-ERR b\r\n')]))).toBe('-ERR a\r\n');
    expect(text(mergeReplies(Merge.AllSucceeded, [b('+OK\r\n'), b('+OK\r\n')]))).toBe('+OK\r\n');
  });

  it('collects arrays (KEYS) and picks the first non-null other reply (RANDOMKEY)', () => {
    expect(text(mergeReplies(Merge.Collect, [b('*1\r\n$1\r\nx\r\n'), b('*0\r\n'), b('*1\r\n$1\r\ny\r\n')]))).toBe('*2\r\n$1\r\nx\r\n$1\r\ny\r\n');
    expect(text(mergeReplies(Merge.Collect, [b('$-1\r\n'), b('$1\r\nk\r\n')]))).toBe('$1\r\nk\r\n');
    expect(text(mergeReplies(Merge.Collect, [b('_\r\n'), b('_\r\n')]))).toBe('_\r\n');
  });
});
