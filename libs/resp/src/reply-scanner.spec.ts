import { DbproxyError } from '@dbproxy/util';
import { ReplyScanner } from './reply-scanner';
import { chunkings, scanReplies } from './testing';
import { ReplyFlag, RespType } from './wire';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

function expectCode(fn: () => unknown, code: string, message?: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(DbproxyError);
  expect((caught as DbproxyError).code).toBe(code);
  if (message !== undefined) expect((caught as DbproxyError).message).toBe(message);
}

const REPLIES: Array<[string, string, number, number]> = [
  ['simple', '+OK\r\n', RespType.SimpleString, 0],
  ['error', '-ERR unknown command\r\n', RespType.Error, ReplyFlag.Error],
  ['integer', ':-42\r\n', RespType.Integer, 0],
  ['bulk', '$5\r\nhe\r\no\r\n', RespType.Bulk, 0],
  ['empty bulk', '$0\r\n\r\n', RespType.Bulk, 0],
  ['null bulk', '$-1\r\n', RespType.Bulk, ReplyFlag.Null],
  ['null array', '*-1\r\n', RespType.Array, ReplyFlag.Null],
  ['empty array', '*0\r\n', RespType.Array, 0],
  ['nested array', '*3\r\n:1\r\n*2\r\n$1\r\na\r\n*0\r\n$-1\r\n', RespType.Array, 0],
  ['resp3 null', '_\r\n', RespType.Null, ReplyFlag.Null],
  ['boolean', '#t\r\n', RespType.Boolean, 0],
  ['double', ',3.14\r\n', RespType.Double, 0],
  ['double inf', ',-inf\r\n', RespType.Double, 0],
  ['big number', '(3492890328409238509324850943850943825024385\r\n', RespType.BigNumber, 0],
  ['bulk error', '!21\r\nSYNTAX invalid syntax\r\n', RespType.BulkError, ReplyFlag.Error],
  ['verbatim', '=15\r\ntxt:Some string\r\n', RespType.Verbatim, 0],
  ['map', '%2\r\n+first\r\n:1\r\n+second\r\n%1\r\n+x\r\n_\r\n', RespType.Map, 0],
  ['set', '~3\r\n+a\r\n+b\r\n~0\r\n', RespType.Set, 0],
  ['push', '>3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n', RespType.Push, ReplyFlag.Push],
  ['attribute', '|1\r\n+ttl\r\n:3600\r\n*2\r\n:1\r\n:2\r\n', RespType.Array, ReplyFlag.Attribute],
  ['nested attribute', '*2\r\n|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n:2\r\n:3\r\n', RespType.Array, 0],
  ['empty attribute', '|0\r\n+OK\r\n', RespType.SimpleString, ReplyFlag.Attribute],
];

describe('ReplyScanner', () => {
  it.each(REPLIES)('finds a %s reply, its type and flags', (_name, text, type, flags) => {
    const bytes = b(text);
    const batch = new ReplyScanner().scan(bytes);
    expect(batch.count).toBe(1);
    expect([batch.start[0], batch.end[0], batch.consumed]).toEqual([0, bytes.length, bytes.length]);
    expect([batch.type[0], batch.flags[0]]).toEqual([type, flags]);
  });

  it('finds every reply in a stream fed whole, split at every byte and byte by byte', () => {
    const stream = b(REPLIES.map((r) => r[1]).join(''));
    for (const chunks of chunkings(stream)) {
      for (const moving of [false, true]) {
        const { replies, rest } = scanReplies(chunks, {}, moving);
        expect(rest).toBe(0);
        expect(replies.map((r) => r.frame.toString('latin1'))).toEqual(REPLIES.map((r) => r[1]));
        expect(replies.map((r) => r.flags)).toEqual(REPLIES.map((r) => r[3]));
      }
    }
  });

  it('answers isError/isPush/isNull and returns views of the scanned buffer', () => {
    const buf = b('-MOVED 1 h:1\r\n>2\r\n+a\r\n+b\r\n$-1\r\n');
    const batch = new ReplyScanner().scan(buf);
    expect([batch.isError(0), batch.isPush(1), batch.isNull(2), batch.isError(2)]).toEqual([true, true, true, false]);
    expect(batch.frame(1).buffer).toBe(buf.buffer);
  });

  it('resumes a large nested reply across many chunks and tells how many bytes a bulk needs', () => {
    const parts = ['*2000\r\n'];
    for (let i = 0; i < 2000; i++) parts.push(i % 2 ? `*2\r\n$3\r\nabc\r\n:${i}\r\n` : `+s${i}\r\n`);
    const big = b(parts.join(''));
    const chunks: Buffer[] = [];
    for (let at = 0; at < big.length; at += 61) chunks.push(big.subarray(at, at + 61));
    const { replies, rest } = scanReplies([...chunks, b('+OK\r\n')]);
    expect(rest).toBe(0);
    expect(replies).toHaveLength(2);
    expect(replies[0].frame.equals(big)).toBe(true);

    const scanner = new ReplyScanner();
    expect(scanner.scan(b('*2\r\n$100\r\nabc')).count).toBe(0);
    expect(scanner.needBytes).toBe(4 + 6 + 100 + 2);
  });

  it('rejects malformed replies with typed errors', () => {
    const scan = (s: string, limits = {}) => (): unknown => new ReplyScanner(limits).scan(b(s));
    expectCode(scan('?x\r\n'), 'DBP_ERR_RESP_UNKNOWN_REPLY_TYPE', 'Protocol error, got "?" as reply type byte');
    expectCode(scan(':12a\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE', 'Protocol error: bad integer line');
    expectCode(scan(':\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE');
    expectCode(scan('#x\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE', 'Protocol error: bad boolean line');
    expectCode(scan('_x\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE');
    expectCode(scan('(1.5\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE');
    expectCode(scan('+OK\rX'), 'DBP_ERR_RESP_BAD_REPLY_LINE', 'Protocol error: bad simple string line');
    expectCode(scan('$-2\r\n'), 'DBP_ERR_RESP_INVALID_BULK_LENGTH');
    expectCode(scan('!-1\r\n'), 'DBP_ERR_RESP_INVALID_BULK_LENGTH');
    expectCode(scan('$9\r\n', { maxBulkLength: 8 }), 'DBP_ERR_RESP_INVALID_BULK_LENGTH');
    expectCode(scan('$2\r\nabc\r\n'), 'DBP_ERR_RESP_MISSING_CRLF');
    expectCode(scan('%-1\r\n'), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(scan('*5\r\n', { maxAggregateLength: 4 }), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(scan('%3\r\n', { maxAggregateLength: 5 }), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(scan('*1\r\n*1\r\n*1\r\n', { maxNestingDepth: 2 }), 'DBP_ERR_RESP_NESTING_TOO_DEEP');
    expectCode(scan(`+${'x'.repeat(20)}`, { maxBulkLength: 8 }), 'DBP_ERR_RESP_BAD_REPLY_LINE');
  });

  it('stops after maxReplies, leaving the rest unread', () => {
    const scanner = new ReplyScanner({ replyBufferLimit: 8 });
    const bytes = b('+OK\r\n?garbage beyond the limit');
    const batch = scanner.scan(bytes, 0, bytes.length, 1);
    expect([batch.count, batch.consumed, scanner.needBytes]).toEqual([1, 5, 0]);
    expect(scanner.scan(b(':1\r\n')).count).toBe(1);
  });

  it('accepts nesting up to maxNestingDepth and empty aggregates below it', () => {
    expect(new ReplyScanner({ maxNestingDepth: 2 }).scan(b('*1\r\n*1\r\n*0\r\n')).count).toBe(1);
  });

  it('bounds a pending or complete reply by the reply buffer limit, however it is chunked', () => {
    const reply = b(`$100\r\n${'x'.repeat(100)}\r\n`);
    for (const chunks of [[reply], [reply.subarray(0, 70), reply.subarray(70)]]) {
      expectCode(() => scanReplies(chunks, { replyBufferLimit: 64 }), 'DBP_ERR_RESP_REPLY_BUFFER_LIMIT');
    }
  });
});

describe('ReplyScanner nesting', () => {
  const nested = (depth: number) => Buffer.from('*1\r\n'.repeat(depth) + ':7\r\n');

  it('scans a reply 5,000 levels deep (a Lua table) under the default bound, also fed byte by byte', () => {
    const reply = nested(5_000);
    expect(new ReplyScanner().scan(reply).count).toBe(1);
    const scanner = new ReplyScanner();
    let count = 0;
    for (let end = 1; end <= reply.length; end++) count += scanner.scan(reply.subarray(0, end), scanner.batch.consumed).count;
    expect(count).toBe(1);
  });

  it('still refuses a reply deeper than the configured bound', () => {
    expect(() => new ReplyScanner({ maxNestingDepth: 300 }).scan(nested(301))).toThrow(expect.objectContaining({ code: 'DBP_ERR_RESP_NESTING_TOO_DEEP' }));
    expect(new ReplyScanner({ maxNestingDepth: 300 }).scan(nested(300)).count).toBe(1);
  });
});
