import { DbproxyError } from '@dbproxy/util';
import { encodeArray, encodeBulk, encodeCommand, encodeError, encodeInteger, encodeNull, encodeSimpleString, encodeValue } from './encoder';
import { RespWriter } from './writer';

const s = (buf: Buffer): string => buf.toString('latin1');

describe('encoders', () => {
  it('encodes commands as multibulk arrays, Buffer args as raw bytes', () => {
    const value = Buffer.from([0, 0xff, 0x0d, 0x0a]);
    expect(s(encodeCommand(['SET', 'k€', value]))).toBe('*3\r\n$3\r\nSET\r\n$4\r\nk\xe2\x82\xac\r\n$4\r\n\x00\xff\r\n\r\n');
    expect(s(encodeCommand(['EXPIRE', 'k', 10, -7, 1.5]))).toBe('*5\r\n$6\r\nEXPIRE\r\n$1\r\nk\r\n$2\r\n10\r\n$2\r\n-7\r\n$3\r\n1.5\r\n');
    expect(s(encodeCommand([]))).toBe('*0\r\n');
  });

  it('allocates exactly the encoded size', () => {
    const out = encodeCommand(['GET', 'key']);
    expect(out.length).toBe(22);
    expect(out.byteOffset + out.length).toBeLessThanOrEqual(out.buffer.byteLength);
  });

  it('encodes RESP2 and RESP3 values', () => {
    expect(s(encodeSimpleString('OK'))).toBe('+OK\r\n');
    expect(s(encodeError('ERR bad\r\nthing'))).toBe('-ERR bad  thing\r\n');
    expect(s(encodeInteger(-12))).toBe(':-12\r\n');
    expect(s(encodeInteger(2n ** 63n - 1n))).toBe(':9223372036854775807\r\n');
    expect(s(encodeBulk('héllo'))).toBe('$6\r\nh\xc3\xa9llo\r\n');
    expect(s(encodeNull())).toBe('$-1\r\n');
    expect(s(encodeNull('array'))).toBe('*-1\r\n');
    expect(s(encodeNull('null'))).toBe('_\r\n');
    expect(s(encodeArray([{ type: 'integer', value: 1 }, { type: 'bulk', value: Buffer.from('a') }]))).toBe('*2\r\n:1\r\n$1\r\na\r\n');
    expect(s(encodeValue({ type: 'double', value: -0 }))).toBe(',-0\r\n');
    expect(s(encodeValue({ type: 'double', value: NaN }))).toBe(',nan\r\n');
    expect(s(encodeValue({ type: 'boolean', value: true }))).toBe('#t\r\n');
    expect(s(encodeValue({ type: 'bignum', value: -5n }))).toBe('(-5\r\n');
    expect(s(encodeValue({ type: 'error', message: 'ERR\r\nx', bulk: true }))).toBe('!6\r\nERR\r\nx\r\n');
    expect(s(encodeValue({ type: 'verbatim', format: 'txt', value: Buffer.from('hi') }))).toBe('=6\r\ntxt:hi\r\n');
    expect(s(encodeValue({ type: 'map', entries: [[{ type: 'simple', value: 'a' }, { type: 'null', form: 'null' }]] }))).toBe('%1\r\n+a\r\n_\r\n');
    expect(s(encodeValue({ type: 'set', items: [] }))).toBe('~0\r\n');
    expect(s(encodeValue({ type: 'push', items: [{ type: 'simple', value: 'p' }] }))).toBe('>1\r\n+p\r\n');
    expect(s(encodeValue({ type: 'attribute', entries: [], value: { type: 'simple', value: 'v' } }))).toBe('|0\r\n+v\r\n');
  });

  it('refuses values RESP cannot carry', () => {
    for (const fn of [() => encodeInteger(1.5), () => encodeInteger(2 ** 60), () => encodeValue({ type: 'verbatim', format: 'text', value: Buffer.alloc(0) })]) {
      expect(fn).toThrow(DbproxyError);
      expect(fn).toThrow(/cannot encode as RESP/);
    }
  });
});

describe('RespWriter', () => {
  it('batches several frames into one Buffer per flush', () => {
    const writer = new RespWriter(64);
    writer.simple('OK').integer(3).command(['PING']).raw(Buffer.from('+raw\r\n')).null();
    expect(writer.length).toBe(34);
    expect(s(writer.flush())).toBe('+OK\r\n:3\r\n*1\r\n$4\r\nPING\r\n+raw\r\n$-1\r\n');
    expect(writer.length).toBe(0);
    expect(writer.flush().length).toBe(0);
  });

  it('never rewrites bytes it has flushed, even when the slab fills up', () => {
    const writer = new RespWriter(32);
    const first = writer.bulk('a'.repeat(10)).flush();
    const copy = Buffer.from(first);
    const second = writer.bulk('b'.repeat(10)).flush();
    const third = writer.bulk('c'.repeat(100)).arrayHeader(2).mapHeader(1).setHeader(0).pushHeader(1).attributeHeader(0).flush();
    expect(first.equals(copy)).toBe(true);
    expect(s(second)).toBe(`$10\r\n${'b'.repeat(10)}\r\n`);
    expect(s(third)).toBe(`$100\r\n${'c'.repeat(100)}\r\n*2\r\n%1\r\n~0\r\n>1\r\n|0\r\n`);
  });

  it('writes RESP3 scalars', () => {
    const out = new RespWriter().boolean(false).double(Infinity).double(0.1).bigNumber(12n).bulkError('E').verbatim('txt', 'v').flush();
    expect(s(out)).toBe('#f\r\n,inf\r\n,0.1\r\n(12\r\n!1\r\nE\r\n=5\r\ntxt:v\r\n');
  });
});
