import fc from 'fast-check';
import { inferParameterType, readBinaryValue, writeBinaryValue } from './binary-values';
import { ColumnType, type MysqlValue } from './column-types';
import { PacketReader, PacketWriter } from './cursor';
import { returnsOrThrowsProtocolError, thrownCode } from './testing';

function encode(type: number, unsigned: boolean, value: MysqlValue): Buffer {
  const w = new PacketWriter();
  w.begin(0);
  writeBinaryValue(w, type, unsigned, value);
  w.end();
  return w.flush().subarray(4);
}

function decode(bytes: Buffer, type: number, unsigned = false, binary = false): MysqlValue {
  const r = new PacketReader(bytes);
  const v = readBinaryValue(r, { type, unsigned, binary });
  expect(r.atEnd()).toBe(true);
  return v;
}

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('binary values: documented encodings', () => {
  it.each<[string, number, boolean, string, MysqlValue]>([
    ['TINY signed', ColumnType.Tiny, false, 'ff', -1],
    ['TINY unsigned', ColumnType.Tiny, true, 'ff', 255],
    ['SHORT', ColumnType.Short, false, '00 80', -32768],
    ['YEAR', ColumnType.Year, false, 'e8 07', 2024],
    ['INT24 (sent as 4 bytes)', ColumnType.Int24, false, 'ff ff 7f 00', 0x7fffff],
    ['LONG unsigned', ColumnType.Long, true, 'ff ff ff ff', 0xffffffff],
    ['LONGLONG signed', ColumnType.LongLong, false, 'ff ff ff ff ff ff ff ff', -1n],
    ['LONGLONG unsigned', ColumnType.LongLong, true, 'ff ff ff ff ff ff ff ff', 0xffffffffffffffffn],
    ['FLOAT', ColumnType.Float, false, '00 00 c0 3f', 1.5],
    ['DOUBLE', ColumnType.Double, false, '00 00 00 00 00 00 f8 3f', 1.5],
    ['NEWDECIMAL', ColumnType.NewDecimal, false, '05 2d 31 2e 32 30', '-1.20'],
    ['DECIMAL', ColumnType.Decimal, false, '01 37', '7'],
    ['VAR_STRING', ColumnType.VarString, false, '03 c3 a9 65', 'ée'],
    ['STRING', ColumnType.String, false, '01 61', 'a'],
    ['VARCHAR', ColumnType.VarChar, false, '00', ''],
    ['ENUM', ColumnType.Enum, false, '01 62', 'b'],
    ['SET', ColumnType.Set, false, '03 61 2c 62', 'a,b'],
    ['JSON', ColumnType.Json, false, '07 7b 22 61 22 3a 31 7d', '{"a":1}'],
    ['BIT', ColumnType.Bit, false, '02 01 02', hex('0102')],
    ['GEOMETRY', ColumnType.Geometry, false, '02 00 01', hex('0001')],
    ['DATE', ColumnType.Date, false, '04 da 07 0a 11', { kind: 'date', year: 2010, month: 10, day: 17 }],
    ['DATE zero', ColumnType.Date, false, '00', { kind: 'date', year: 0, month: 0, day: 0 }],
    ['DATETIME', ColumnType.DateTime, false, '07 da 07 0a 11 13 1b 1e', { kind: 'datetime', year: 2010, month: 10, day: 17, hour: 19, minute: 27, second: 30, microsecond: 0 }],
    ['TIMESTAMP with micros', ColumnType.Timestamp, false, '0b da 07 0a 11 13 1b 1e 01 00 00 00', { kind: 'datetime', year: 2010, month: 10, day: 17, hour: 19, minute: 27, second: 30, microsecond: 1 }],
    ['TIME', ColumnType.Time, false, '08 01 78 00 00 00 13 1b 1e', { kind: 'time', negative: true, days: 120, hours: 19, minutes: 27, seconds: 30, microseconds: 0 }],
    ['TIME with micros', ColumnType.Time, false, '0c 00 00 00 00 00 01 02 03 40 e2 01 00', { kind: 'time', negative: false, days: 0, hours: 1, minutes: 2, seconds: 3, microseconds: 123456 }],
    ['TIME zero', ColumnType.Time, false, '00', { kind: 'time', negative: false, days: 0, hours: 0, minutes: 0, seconds: 0, microseconds: 0 }],
  ])('%s', (_name, type, unsigned, bytes, value) => {
    expect(decode(hex(bytes), type, unsigned)).toEqual(value);
    expect(encode(type, unsigned, value).toString('hex')).toBe(hex(bytes).toString('hex'));
  });

  it('reads BLOBs as Buffer when binary and as text when the column has a text collation', () => {
    for (const type of [ColumnType.TinyBlob, ColumnType.MediumBlob, ColumnType.LongBlob, ColumnType.Blob]) {
      expect(decode(hex('02 6869'), type, false, true)).toEqual(Buffer.from('hi'));
      expect(decode(hex('02 6869'), type, false, false)).toBe('hi');
    }
    expect(decode(hex('02 6869'), ColumnType.VarString, false, true)).toEqual(Buffer.from('hi'));
  });

  it('NULL has no bytes', () => {
    expect(decode(Buffer.alloc(0), ColumnType.Null)).toBeNull();
  });
});

describe('binary values: encoder checks', () => {
  it('refuses out-of-range integers and wrong shapes with typed errors', () => {
    expect(thrownCode(() => encode(ColumnType.Tiny, false, 128))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.Long, true, -1))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.LongLong, false, 2n ** 63n))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.LongLong, false, 1.5))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.Date, false, 'yesterday'))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.Time, false, { kind: 'date', year: 1, month: 1, day: 1 }))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.Double, false, 'x'))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.Blob, false, { kind: 'date', year: 1, month: 1, day: 1 }))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(0x42, false, 'x'))).toBe('DBP_ERR_MYSQL_UNSUPPORTED_TYPE');
    expect(thrownCode(() => encode(ColumnType.Long, false, null))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
  });

  it('accepts decimal strings for BIGINT and numbers for DECIMAL', () => {
    expect(decode(encode(ColumnType.LongLong, true, '18446744073709551615'), ColumnType.LongLong, true)).toBe(18446744073709551615n);
    expect(decode(encode(ColumnType.NewDecimal, false, 12.5), ColumnType.NewDecimal)).toBe('12.5');
  });

  it('writes a DATE from a datetime without its time part', () => {
    const dt = { kind: 'datetime', year: 2024, month: 2, day: 29, hour: 23, minute: 0, second: 0, microsecond: 5 } as const;
    expect(decode(encode(ColumnType.Date, false, dt), ColumnType.Date)).toEqual({ kind: 'date', year: 2024, month: 2, day: 29 });
  });
});

describe('binary values: properties', () => {
  it('integers of every width round-trip', () => {
    const cases: [number, boolean, fc.Arbitrary<MysqlValue>][] = [
      [ColumnType.Tiny, false, fc.integer({ min: -128, max: 127 })],
      [ColumnType.Tiny, true, fc.integer({ min: 0, max: 255 })],
      [ColumnType.Short, false, fc.integer({ min: -32768, max: 32767 })],
      [ColumnType.Long, false, fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })],
      [ColumnType.Long, true, fc.integer({ min: 0, max: 2 ** 32 - 1 })],
      [ColumnType.LongLong, false, fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })],
      [ColumnType.LongLong, true, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })],
      [ColumnType.Double, false, fc.double({ noNaN: true })],
      [ColumnType.VarString, false, fc.string({ maxLength: 300 })],
      [ColumnType.Blob, false, fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))],
    ];
    for (const [type, unsigned, arb] of cases) {
      fc.assert(
        fc.property(arb, (v) => {
          expect(decode(encode(type, unsigned, v), type, unsigned, type === ColumnType.Blob)).toEqual(v);
        }),
        { numRuns: 50 },
      );
    }
  });

  it('datetimes and times round-trip', () => {
    const dt = fc.record({
      kind: fc.constant('datetime' as const),
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 0, max: 12 }),
      day: fc.integer({ min: 0, max: 31 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 59 }),
      microsecond: fc.integer({ min: 0, max: 999999 }),
    });
    const time = fc.record({
      kind: fc.constant('time' as const),
      negative: fc.boolean(),
      days: fc.integer({ min: 0, max: 34 }),
      hours: fc.integer({ min: 0, max: 23 }),
      minutes: fc.integer({ min: 0, max: 59 }),
      seconds: fc.integer({ min: 0, max: 59 }),
      microseconds: fc.integer({ min: 0, max: 999999 }),
    });
    fc.assert(fc.property(dt, (v) => void expect(decode(encode(ColumnType.DateTime, false, v), ColumnType.DateTime)).toEqual(v)));
    fc.assert(
      fc.property(time, (v) => {
        const back = decode(encode(ColumnType.Time, false, v), ColumnType.Time);
        const zero = v.days + v.hours + v.minutes + v.seconds + v.microseconds === 0;
        expect(back).toEqual(zero ? { ...v, negative: false } : v);
      }),
    );
  });

  it('reading any bytes as any type returns or throws a typed protocol error', () => {
    const types = Object.values(ColumnType);
    fc.assert(
      fc.property(fc.constantFrom(...types), fc.boolean(), fc.uint8Array({ maxLength: 16 }), (type, unsigned, bytes) => {
        returnsOrThrowsProtocolError(() => readBinaryValue(new PacketReader(Buffer.from(bytes)), { type, unsigned, binary: false }));
      }),
    );
  });
});

describe('inferParameterType', () => {
  it('picks the type a client without hints would bind', () => {
    expect(inferParameterType(null)).toEqual({ type: ColumnType.Null, unsigned: false });
    expect(inferParameterType(5)).toEqual({ type: ColumnType.LongLong, unsigned: false });
    expect(inferParameterType(0.5)).toEqual({ type: ColumnType.Double, unsigned: false });
    expect(inferParameterType(2n ** 63n)).toEqual({ type: ColumnType.LongLong, unsigned: true });
    expect(inferParameterType('x')).toEqual({ type: ColumnType.VarString, unsigned: false });
    expect(inferParameterType(Buffer.alloc(1))).toEqual({ type: ColumnType.Blob, unsigned: false });
    expect(inferParameterType({ kind: 'date', year: 1, month: 1, day: 1 }).type).toBe(ColumnType.Date);
    expect(inferParameterType({ kind: 'time', negative: false, days: 0, hours: 1, minutes: 0, seconds: 0, microseconds: 0 }).type).toBe(ColumnType.Time);
  });
});

describe('binary values: temporal field ranges', () => {
  it('refuses fields that do not fit instead of truncating them', () => {
    expect(thrownCode(() => encode(ColumnType.Time, false, { kind: 'time', negative: false, days: 0, hours: 838, minutes: 0, seconds: 0, microseconds: 0 }))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.DateTime, false, { kind: 'datetime', year: 2024, month: 13, day: 1, hour: 0, minute: 0, second: 0, microsecond: 0 }))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(thrownCode(() => encode(ColumnType.Date, false, { kind: 'date', year: 10000, month: 1, day: 1 }))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
  });
});
