import { DbproxyError } from '@dbproxy/util';
import { CommandScanner } from './command-scanner';
import { InlineReframer } from './inline-reframer';
import { chunkings, scanCommands } from './testing';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const argsOf = (line: string): string[] => {
  const { commands, rest } = scanCommands([b(line)]);
  expect(rest).toBe(0);
  expect(commands).toHaveLength(1);
  expect(commands[0].inline).toBe(true);
  return commands[0].args.map((a) => a.toString('latin1'));
};

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

describe('CommandScanner inline commands', () => {
  it('splits on blanks and accepts \\r\\n or \\n line ends', () => {
    expect(argsOf('PING\r\n')).toEqual(['PING']);
    expect(argsOf('SET  key\tvalue \n')).toEqual(['SET', 'key', 'value']);
    expect(argsOf('  get k\x0b\r\n')).toEqual(['get', 'k\x0b']);
  });

  it('unquotes double-quoted strings with Redis escapes', () => {
    expect(argsOf('SET k "hello world"\r\n')).toEqual(['SET', 'k', 'hello world']);
    expect(argsOf('SET k "a\\x41\\n\\r\\t\\b\\a\\"\\\\\\q"\r\n')).toEqual(['SET', 'k', 'aA\n\r\t\b\x07"\\q']);
    expect(argsOf('SET k "\\x4"\r\n')).toEqual(['SET', 'k', 'x4']);
    expect(argsOf('SET k ""\r\n')).toEqual(['SET', 'k', '']);
  });

  it('unquotes single-quoted strings where only \\\' is an escape', () => {
    expect(argsOf("SET k 'it\\'s \\n'\r\n")).toEqual(['SET', 'k', "it's \\n"]);
  });

  it('joins a quoted part to the unquoted text before it', () => {
    expect(argsOf('SET k ab"c d"\r\n')).toEqual(['SET', 'k', 'abc d']);
  });

  it('keeps plain and simply quoted arguments as views of the input', () => {
    const scanner = new CommandScanner();
    const buf = b('SET "k 1" value\r\n');
    const batch = scanner.scan(buf);
    expect(batch.source(0)).toBe(buf);
    expect([batch.offset(0, 1), batch.length(0, 1)]).toEqual([5, 3]);
    const escaped = b('SET "k\\n1" value\r\n');
    const batch2 = scanner.scan(escaped);
    expect(batch2.source(0)).not.toBe(escaped);
    expect(batch2.argToString(0, 1)).toBe('k\n1');
    expect(batch2.argEquals(0, 0, 'set')).toBe(true);
    expect(batch2.frame(0)).toEqual(escaped);
  });

  it('refuses a NUL byte anywhere in an inline line, however it is chunked (Redis would wait for more input)', () => {
    for (const line of ['GET k\x00 ignored\r\n', 'GET "k\x00"\r\n', '\x00\r\n', 'GET a\x00b']) {
      for (const chunks of chunkings(b(line))) expectCode(() => scanCommands(chunks), 'DBP_ERR_RESP_INLINE_NUL', 'Protocol error: NUL byte in inline request');
    }
  });

  it('re-encodes an inline command as the multibulk frame of the arguments it found', () => {
    const batch = new CommandScanner().scan(b('SET "a b" \'c\\\'d\' \\x41 "\\x41"\nPING\r\n'));
    const reframer = new InlineReframer();
    const one = reframer.reframe(batch, 0);
    expect(one.count).toBe(1);
    expect(one.isInline(0)).toBe(false);
    expect(one.frame(0).toString('latin1')).toBe('*5\r\n$3\r\nSET\r\n$3\r\na b\r\n$3\r\nc\'d\r\n$4\r\n\\x41\r\n$1\r\nA\r\n');
    expect(reframer.reframe(batch, 1).frame(0).toString('latin1')).toBe('*1\r\n$4\r\nPING\r\n');
  });

  it('skips empty lines without emitting a command', () => {
    const { commands, rest } = scanCommands([b('\r\n\n   \r\nPING\r\n')]);
    expect(commands.map((c) => c.args.length)).toEqual([1]);
    expect(rest).toBe(0);
  });

  it('mixes inline and multibulk frames, fed in any chunking', () => {
    const stream = b('PING\r\n*1\r\n$4\r\nPING\r\nECHO "a b"\nSET k \'v\'\r\n');
    for (const chunks of chunkings(stream)) {
      for (const moving of [false, true]) {
        const { commands, rest } = scanCommands(chunks, {}, moving);
        expect(rest).toBe(0);
        expect(commands.map((c) => c.args.map(String))).toEqual([['PING'], ['PING'], ['ECHO', 'a b'], ['SET', 'k', 'v']]);
        expect(commands.map((c) => c.inline)).toEqual([true, false, true, true]);
      }
    }
  });

  it('rejects unbalanced quotes with the Redis message', () => {
    for (const line of ['GET "k\r\n', "GET 'k\r\n", 'GET "k"x\r\n', "GET 'k'x\r\n", 'GET "k\\"\r\n']) {
      expectCode(() => new CommandScanner().scan(b(line)), 'DBP_ERR_RESP_UNBALANCED_QUOTES', 'Protocol error: unbalanced quotes in request');
    }
  });

  it('accepts lines up to maxInlineLength and rejects longer ones however they are chunked', () => {
    const max = 32;
    const ok = b(`GET ${'k'.repeat(max - 4)}\r\n`);
    const tooLong = b(`GET ${'k'.repeat(max - 3)}\r\n`);
    for (const chunks of chunkings(ok)) expect(scanCommands(chunks, { maxInlineLength: max }).commands).toHaveLength(1);
    for (const chunks of chunkings(tooLong)) {
      expectCode(() => scanCommands(chunks, { maxInlineLength: max }), 'DBP_ERR_RESP_INLINE_TOO_BIG', 'Protocol error: too big inline request');
    }
    expectCode(() => new CommandScanner({ maxInlineLength: max }).scan(b('x'.repeat(max + 2))), 'DBP_ERR_RESP_INLINE_TOO_BIG');
  });
});
