import { DbproxyError } from '@dbproxy/util';
import { CommandScanner } from './command-scanner';
import { encodeCommand } from './encoder';
import { chunkings, scanCommands } from './testing';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const texts = (args: Buffer[]): string[] => args.map((a) => a.toString('latin1'));

function expectCode(fn: () => unknown, code: string, message?: string): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DbproxyError);
    expect((err as DbproxyError).code).toBe(code);
    if (message !== undefined) expect((err as DbproxyError).message).toBe(message);
    return;
  }
  throw new Error(`expected ${code}`);
}

describe('CommandScanner multibulk', () => {
  const get = b('*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n');
  const set = b('*3\r\n$3\r\nset\r\n$5\r\nk\r\n:1\r\n$0\r\n\r\n');
  const stream = Buffer.concat([get, set, get]);

  it.each([false, true])('finds every frame and argument fed whole, split at every byte and byte by byte (moving=%s)', (moving) => {
    for (const chunks of chunkings(stream)) {
      const { commands, rest } = scanCommands(chunks, {}, moving);
      expect(rest).toBe(0);
      expect(commands.map((c) => c.frame)).toEqual([get, set, get]);
      expect(commands.map((c) => texts(c.args))).toEqual([['GET', 'foo'], ['set', 'k\r\n:1', ''], ['GET', 'foo']]);
      expect(commands.every((c) => !c.inline)).toBe(true);
    }
  });

  it('reports frame bounds and argument offsets into the scanned buffer', () => {
    const scanner = new CommandScanner();
    const buf = Buffer.concat([b('xx'), get, set.subarray(0, 7)]);
    const batch = scanner.scan(buf, 2);
    expect(batch.count).toBe(1);
    expect([batch.frameStart[0], batch.frameEnd[0], batch.consumed]).toEqual([2, 2 + get.length, 2 + get.length]);
    expect(batch.argCount[0]).toBe(2);
    expect([batch.offset(0, 1), batch.length(0, 1)]).toEqual([2 + 17, 3]);
    expect(batch.frame(0).buffer).toBe(buf.buffer);
    expect(batch.argEquals(0, 0, 'get')).toBe(true);
    expect(batch.argEquals(0, 0, 'GEt')).toBe(true);
    expect(batch.argEquals(0, 0, 'SET')).toBe(false);
    expect(batch.argToString(0, 1)).toBe('foo');
    // argToBuffer is a view: it shares memory with the input.
    buf[2 + 17] = 0x46;
    expect(batch.argToBuffer(0, 1).toString()).toBe('Foo');
  });

  it('reads integer arguments in place', () => {
    const batch = new CommandScanner().scan(encodeCommand(['EXPIRE', 'k', 120, '-5', '012', 'x', '9007199254740993']));
    expect([2, 3, 4, 5, 6].map((k) => batch.argToInt(0, k))).toEqual([120, -5, NaN, NaN, NaN]);
  });

  it('stops after maxCommands, leaving the rest unread (connection mode)', () => {
    const scanner = new CommandScanner();
    const buf = Buffer.concat([get, b('*1\r\n+not a bulk\r\n')]);
    const batch = scanner.scan(buf, 0, buf.length, 1);
    expect([batch.count, batch.consumed]).toEqual([1, get.length]);
    expect(buf.subarray(batch.consumed).toString()).toBe('*1\r\n+not a bulk\r\n');
  });

  it('consumes empty multibulk frames without emitting a command, as Redis does', () => {
    const { commands, rest } = scanCommands([b('*0\r\n*-1\r\n'), get]);
    expect(commands).toHaveLength(1);
    expect(rest).toBe(0);
  });

  it('resumes a large command across many chunks without losing arguments', () => {
    const args = Array.from({ length: 3000 }, (_, i) => `key:${i}`);
    const bytes = encodeCommand(['MGET', ...args]);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 97) chunks.push(bytes.subarray(at, at + 97));
    for (const moving of [false, true]) {
      const { commands } = scanCommands([...chunks, get], {}, moving);
      expect(commands).toHaveLength(2);
      expect(texts(commands[0].args)).toEqual(['MGET', ...args]);
      expect(commands[0].frame.equals(bytes)).toBe(true);
    }
  });

  it('tells how many bytes a pending bulk needs', () => {
    const scanner = new CommandScanner();
    const big = encodeCommand(['SET', 'k', Buffer.alloc(100000, 1)]);
    const head = Buffer.concat([get, big.subarray(0, 40)]);
    const batch = scanner.scan(head);
    expect(batch.count).toBe(1);
    expect(scanner.needBytes).toBe(big.length);
    expect(scanner.scan(Buffer.concat([big, get]), 0).count).toBe(2);
    expect(scanner.needBytes).toBe(0);
  });

  it('rejects malformed frames with the messages Redis uses', () => {
    const scan = (s: string, limits = {}) => (): unknown => new CommandScanner(limits).scan(b(s));
    expectCode(scan('*x\r\n'), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH', 'Protocol error: invalid multibulk length');
    expectCode(scan('*01\r\n'), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(scan('*1 \r\n'), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(scan('*99999999999\r\n'), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(scan('*3\r\n', { maxMultibulkLength: 2 }), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(scan('*1\r\n+GET\r\n'), 'DBP_ERR_RESP_EXPECTED_BULK', "Protocol error: expected '$', got '+'");
    expectCode(scan('*1\r\n\r\n'), 'DBP_ERR_RESP_EXPECTED_BULK', "Protocol error: expected '$', got ' '");
    expectCode(scan('*1\r\n$-1\r\n'), 'DBP_ERR_RESP_INVALID_BULK_LENGTH', 'Protocol error: invalid bulk length');
    expectCode(scan('*1\r\n$5\r\n', { maxBulkLength: 4 }), 'DBP_ERR_RESP_INVALID_BULK_LENGTH');
    expectCode(scan('*1\r\n$3\r\nGETxx'), 'DBP_ERR_RESP_MISSING_CRLF');
    expectCode(scan('*1\r\n$3x\r\n'), 'DBP_ERR_RESP_INVALID_BULK_LENGTH');
  });

  it('bounds a pending or complete command by the query buffer limit, however it is chunked', () => {
    const frame = encodeCommand(['SET', 'k', 'x'.repeat(100)]);
    for (const chunks of [[frame], [frame.subarray(0, 60), frame.subarray(60)]]) {
      expectCode(() => scanCommands(chunks, { queryBufferLimit: 64 }), 'DBP_ERR_RESP_QUERY_BUFFER_LIMIT');
    }
    expect(scanCommands([frame], { queryBufferLimit: frame.length }).commands).toHaveLength(1);
  });
});
