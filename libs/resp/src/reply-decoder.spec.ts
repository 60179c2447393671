import { DbproxyError } from '@dbproxy/util';
import { decodeReply } from './reply-decoder';
import type { RespValue } from './value';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const decode = (s: string): RespValue => decodeReply(b(s));
const bulk = (s: string): RespValue => ({ type: 'bulk', value: b(s) });

function expectCode(fn: () => unknown, code: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(DbproxyError);
  expect((caught as DbproxyError).code).toBe(code);
}

describe('decodeReply', () => {
  it('decodes RESP2 types', () => {
    expect(decode('+OK\r\n')).toEqual({ type: 'simple', value: 'OK' });
    expect(decode('-WRONGTYPE Operation\r\n')).toEqual({ type: 'error', message: 'WRONGTYPE Operation', bulk: false });
    expect(decode(':1000\r\n')).toEqual({ type: 'integer', value: 1000 });
    expect(decode('$3\r\nfoo\r\n')).toEqual(bulk('foo'));
    expect(decode('$-1\r\n')).toEqual({ type: 'null', form: 'bulk' });
    expect(decode('*-1\r\n')).toEqual({ type: 'null', form: 'array' });
    expect(decode('*2\r\n$1\r\na\r\n$-1\r\n')).toEqual({ type: 'array', items: [bulk('a'), { type: 'null', form: 'bulk' }] });
  });

  it('keeps 64-bit integers exact as bigints', () => {
    expect(decode(':9223372036854775807\r\n')).toEqual({ type: 'integer', value: 9223372036854775807n });
    expect(decode(':-9007199254740991\r\n')).toEqual({ type: 'integer', value: -9007199254740991 });
    expect(decode(':007\r\n')).toEqual({ type: 'integer', value: 7 });
    expect(decode(':0\r\n')).toEqual({ type: 'integer', value: 0 });
    expect(decode('(-3492890328409238509324850943850943825024385\r\n')).toEqual({ type: 'bignum', value: -3492890328409238509324850943850943825024385n });
  });

  it('decodes RESP3 types', () => {
    expect(decode('_\r\n')).toEqual({ type: 'null', form: 'null' });
    expect(decode('#f\r\n')).toEqual({ type: 'boolean', value: false });
    expect(decode(',1.5e3\r\n')).toEqual({ type: 'double', value: 1500 });
    expect(decode(',-inf\r\n')).toEqual({ type: 'double', value: -Infinity });
    expect(decode(',nan\r\n')).toEqual({ type: 'double', value: NaN });
    expect(decode('!5\r\nERR x\r\n')).toEqual({ type: 'error', message: 'ERR x', bulk: true });
    expect(decode('=8\r\nmkd:# hi\r\n')).toEqual({ type: 'verbatim', format: 'mkd', value: b('# hi') });
    expect(decode('%1\r\n+k\r\n~1\r\n#t\r\n')).toEqual({
      type: 'map',
      entries: [[{ type: 'simple', value: 'k' }, { type: 'set', items: [{ type: 'boolean', value: true }] }]],
    });
    expect(decode('>2\r\n+a\r\n:1\r\n')).toEqual({ type: 'push', items: [{ type: 'simple', value: 'a' }, { type: 'integer', value: 1 }] });
    expect(decode('|1\r\n+ttl\r\n:5\r\n$1\r\nv\r\n')).toEqual({
      type: 'attribute',
      entries: [[{ type: 'simple', value: 'ttl' }, { type: 'integer', value: 5 }]],
      value: bulk('v'),
    });
  });

  it('returns bulk values as views of the input', () => {
    const buf = b('*1\r\n$3\r\nabc\r\n');
    const value = decodeReply(buf);
    expect(value.type === 'array' && value.items[0].type === 'bulk' && value.items[0].value.buffer === buf.buffer).toBe(true);
  });

  it('decodes one reply inside a larger buffer', () => {
    const buf = b('+a\r\n:7\r\n+b\r\n');
    expect(decodeReply(buf, 4, 8)).toEqual({ type: 'integer', value: 7 });
  });

  it('rejects malformed, incomplete and over-long input with typed errors', () => {
    expectCode(() => decode(',1.2.x\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE');
    expectCode(() => decode(',1e\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE');
    expectCode(() => decode('=2\r\nab\r\n'), 'DBP_ERR_RESP_BAD_REPLY_LINE');
    expectCode(() => decode('*2\r\n:1\r\n'), 'DBP_ERR_RESP_INCOMPLETE_REPLY');
    expectCode(() => decode('$3\r\nab'), 'DBP_ERR_RESP_INCOMPLETE_REPLY');
    expectCode(() => decode('+OK\r\n+'), 'DBP_ERR_RESP_TRAILING_BYTES');
    expectCode(() => decode(''), 'DBP_ERR_RESP_INCOMPLETE_REPLY');
    expectCode(() => decode('~-1\r\n'), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
    expectCode(() => decodeReply(b('*1\r\n*1\r\n:1\r\n'), 0, 14, { maxNestingDepth: 1 }), 'DBP_ERR_RESP_NESTING_TOO_DEEP');
    expectCode(() => decodeReply(b('%2\r\n'), 0, 4, { maxAggregateLength: 3 }), 'DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH');
  });
});
