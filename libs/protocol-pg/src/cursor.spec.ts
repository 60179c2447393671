import { DbproxyError } from '@dbproxy/util';
import { MessageReader, MessageWriter } from './cursor';

describe('MessageWriter', () => {
  it('frames a typed message with a length that counts itself but not the type byte', () => {
    const bytes = new MessageWriter().begin(0x51).cstring('hi').end().flush();
    expect(bytes).toEqual(Buffer.from([0x51, 0, 0, 0, 7, 0x68, 0x69, 0]));
  });

  it('grows past its initial size and keeps earlier bytes', () => {
    const writer = new MessageWriter(4);
    writer.begin(0x64).bytes(Buffer.alloc(1000, 7)).end();
    const out = writer.flush();
    expect(out.length).toBe(1005);
    expect(out.readInt32BE(1)).toBe(1004);
    expect(out.subarray(5).every((b) => b === 7)).toBe(true);
  });

  it('never overwrites a buffer it already handed out', () => {
    const writer = new MessageWriter(16);
    const first = writer.begin(0x53).end().flush();
    writer.begin(0x48).end().flush();
    expect(first).toEqual(Buffer.from([0x53, 0, 0, 0, 4]));
  });

  it('refuses values outside their wire range with a typed error', () => {
    const writer = new MessageWriter();
    expect(() => writer.i16(40000)).toThrow(expect.objectContaining({ code: 'DBP_ERR_PG_ENCODE_INVALID' }));
    expect(() => writer.u32(-1)).toThrow(DbproxyError);
    expect(() => writer.i32(1.5)).toThrow(DbproxyError);
    expect(() => writer.cstring('a\0b')).toThrow(expect.objectContaining({ code: 'DBP_ERR_PG_ENCODE_INVALID' }));
  });

  it('drops a half-written message when encoding fails inside atomic()', () => {
    const writer = new MessageWriter();
    writer.begin(0x53).end();
    expect(() => writer.atomic((w) => w.begin(0x51).cstring('x').cstring('bad\0'))).toThrow(DbproxyError);
    expect(writer.flush()).toEqual(Buffer.from([0x53, 0, 0, 0, 4]));
  });

  it('refuses to flush inside an open message', () => {
    const writer = new MessageWriter().begin(0x51);
    expect(() => writer.flush()).toThrow(expect.objectContaining({ code: 'DBP_ERR_PG_ENCODE_INVALID' }));
  });
});

describe('MessageReader', () => {
  it('reads integers, strings and nullable values', () => {
    const body = Buffer.from([0xff, 0xfe, 0, 0, 0, 2, 0x61, 0x62, 0x63, 0, 0xff, 0xff, 0xff, 0xff]);
    const reader = new MessageReader(body, 'Test');
    expect(reader.i16()).toBe(-2);
    expect(reader.nullableBytes()).toEqual(Buffer.from('ab'));
    expect(reader.cstring()).toBe('c');
    expect(reader.nullableBytes()).toBeNull();
    expect(() => reader.end()).not.toThrow();
  });

  it('names the message in every overrun', () => {
    const reader = new MessageReader(Buffer.from([1, 2]), 'Bind');
    expect(() => reader.i32()).toThrow(/malformed Bind message/);
    expect(() => new MessageReader(Buffer.from('abc'), 'Query').cstring()).toThrow(/missing string terminator/);
    expect(() => new MessageReader(Buffer.from([0xff, 0xff, 0xff, 0xfe]), 'DataRow').nullableBytes()).toThrow(/negative value length/);
    expect(() => new MessageReader(Buffer.from([1]), 'Sync').end()).toThrow(/1 trailing bytes/);
  });

  it('returns slices of the message, not copies', () => {
    const body = Buffer.from([0, 0, 0, 1, 9]);
    const value = new MessageReader(body, 'DataRow').nullableBytes();
    expect(value?.buffer).toBe(body.buffer);
  });
});
