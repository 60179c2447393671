import { DbproxyError } from '@dbproxy/util';
import fc from 'fast-check';
import * as cal from './calendar';
import type { PgValue } from './codec';
import { PgTypeOid } from './oids';
import { decodeValue, encodeValue, formatAt, isSupportedType, transcodeValue, typeCodec } from './registry';

jest.setTimeout(60_000);

const T = 0;
const B = 1;
const hex = (h: string) => Buffer.from(h, 'hex');
const text = (s: string) => Buffer.from(s, 'utf8');

function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DbproxyError) return err.code;
    throw err;
  }
  throw new Error('expected a typed error');
}

/** Binary values produced by PostgreSQL 15's *_send functions, with the text the server prints for them. */
const FROM_POSTGRES: [keyof typeof PgTypeOid, string, string][] = [
  ['numeric', '0003000140000006000c0d801ed2', '-123456.789000'],
  ['numeric', '00000000c0000000', 'NaN'],
  ['numeric', '00000000d0000020', 'Infinity'],
  ['numeric', '00000000f0000020', '-Infinity'],
  ['numeric', '0002ffff00000006000108fc', '0.000123'],
  ['date', '00002279', '2024-02-29'],
  ['date', 'ffda97a7', '4714-11-24 BC'],
  ['date', '80000000', '-infinity'],
  ['date', 'ffffffff', '1999-12-31'],
  ['timestamp', '0002b58341728614', '2024-02-29 12:34:56.789012'],
  ['timestamp', 'ff1af9e74e1f8800', '0044-03-15 10:00:00 BC'],
  ['timestamptz', 'ffffffff296c5c00', '1999-12-31 23:00:00+00'],
  ['timestamptz', '7fffffffffffffff', 'infinity'],
  ['time', '000000141dd75fff', '23:59:59.999999'],
  ['time', '000000141dd76000', '24:00:00'],
  ['float4', '3fc00000', '1.5'],
  ['float4', '000116c2', '1e-40'],
  ['float8', 'fff0000000000000', '-Infinity'],
  ['int8', 'fffffffffffffffe', '-2'],
  ['int2', '8000', '-32768'],
  ['oid', 'ffffffff', '4294967295'],
  ['bool', '01', 't'],
  ['jsonb', '017b2261223a205b312c20322e35305d7d', '{"a": [1, 2.50]}'],
  ['char', 'e9', '\\351'],
];

describe('type codecs against PostgreSQL', () => {
  it.each(FROM_POSTGRES)('%s %s decodes to what the server prints (%s)', (type, binary, printed) => {
    const oid = PgTypeOid[type];
    const fromBinary = decodeValue(oid, B, hex(binary));
    expect(fromBinary).toEqual(decodeValue(oid, T, text(printed)));
    expect(transcodeValue(oid, B, T, hex(binary))).toEqual(text(printed));
    const reencoded = transcodeValue(oid, T, B, text(printed));
    expect(decodeValue(oid, B, reencoded)).toEqual(fromBinary);
  });

  it('encodes numeric exactly as the server does', () => {
    expect(encodeValue(PgTypeOid.numeric, B, '-123456.789000')).toEqual(hex('0003000140000006000c0d801ed2'));
    expect(encodeValue(PgTypeOid.numeric, B, '0.000123')).toEqual(hex('0002ffff00000006000108fc'));
    expect(encodeValue(PgTypeOid.numeric, B, 'NaN')).toEqual(hex('00000000c0000000'));
  });
});

describe('scalar types', () => {
  it.each<[keyof typeof PgTypeOid, string, PgValue]>([
    ['bool', 'yes', true],
    ['bool', ' OFF ', false],
    ['int2', ' 42 ', 42],
    ['int4', '-2147483648', -2147483648],
    ['int4', '-0', 0],
    ['int8', '9223372036854775807', 9223372036854775807n],
    ['oid', '-1', 4294967295],
    ['float8', 'nan', NaN],
    ['float8', '-inf', -Infinity],
    ['float8', '1e+20', 1e20],
    ['float4', '0.1', Math.fround(0.1)],
    ['char', 'a', 'a'],
    ['char', '', ''],
    ['char', 'abc', 'a'],
    ['text', 'grüße ✓', 'grüße ✓'],
    ['bpchar', 'ab  ', 'ab  '],
    ['json', '{"b":1,"b":2}', '{"b":1,"b":2}'],
    ['bytea', '\\x00ff10', hex('00ff10')],
    ['bytea', 'a\\\\b\\000', Buffer.from([0x61, 0x5c, 0x62, 0])],
  ])('%s text %j decodes to %p', (type, input, value) => {
    expect(decodeValue(PgTypeOid[type], T, text(input))).toEqual(value);
  });

  it.each<[keyof typeof PgTypeOid, string, string]>([
    ['int2', '32768', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['int4', '1.5', 'DBP_ERR_PG_VALUE_INVALID'],
    ['int8', '9223372036854775808', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['bool', 'o', 'DBP_ERR_PG_VALUE_INVALID'],
    ['float4', '1e39', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['float8', '1e-400', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['float8', '0x10', 'DBP_ERR_PG_VALUE_INVALID'],
    ['bytea', '\\x0', 'DBP_ERR_PG_VALUE_INVALID'],
    ['bytea', '\\9', 'DBP_ERR_PG_VALUE_INVALID'],
    ['numeric', '1.2.3', 'DBP_ERR_PG_VALUE_INVALID'],
    ['numeric', '1e9999999', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['date', '2023-02-29', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['date', '0000-01-01', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['date', '4714-11-23 BC', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['date', '01/02/2024', 'DBP_ERR_PG_VALUE_INVALID'],
    ['time', '24:00:01', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
    ['timestamptz', '2024-01-01 00:00:00', 'DBP_ERR_PG_VALUE_INVALID'],
    ['timestamp', '294277-01-01 00:00:00', 'DBP_ERR_PG_VALUE_OUT_OF_RANGE'],
  ])('%s text %j is refused with %s', (type, input, code) => {
    expect(thrownCode(() => decodeValue(PgTypeOid[type], T, text(input)))).toBe(code);
  });

  it('refuses binary values of the wrong size or shape', () => {
    expect(thrownCode(() => decodeValue(PgTypeOid.int4, B, hex('0001')))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => decodeValue(PgTypeOid.jsonb, B, hex('027b7d')))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => decodeValue(PgTypeOid.numeric, B, hex('0001000000000000')))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => decodeValue(PgTypeOid.numeric, B, hex('000100000000000027ff')))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => decodeValue(PgTypeOid.numeric, B, hex('000000001234000000')))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => decodeValue(PgTypeOid.text, B, hex('ff')))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => decodeValue(PgTypeOid.time, B, hex('ffffffffffffffff')))).toBe('DBP_ERR_PG_VALUE_OUT_OF_RANGE');
    expect(thrownCode(() => decodeValue(PgTypeOid.date, B, hex('7ffffff0')))).toBe('DBP_ERR_PG_VALUE_OUT_OF_RANGE');
  });

  it('keeps a leading byte-order mark in text (no silent loss)', () => {
    expect(decodeValue(PgTypeOid.text, T, text('\uFEFFx'))).toBe('\uFEFFx');
  });

  it('refuses values it cannot encode without loss', () => {
    expect(thrownCode(() => encodeValue(PgTypeOid.float4, B, 0.1))).toBe('DBP_ERR_PG_VALUE_OUT_OF_RANGE');
    expect(thrownCode(() => encodeValue(PgTypeOid.text, T, 'a\0b'))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => encodeValue(PgTypeOid.text, T, '\uD800'))).toBe('DBP_ERR_PG_VALUE_INVALID');
    expect(thrownCode(() => encodeValue(PgTypeOid.int4, B, 2 ** 31))).toBe('DBP_ERR_PG_VALUE_OUT_OF_RANGE');
    expect(thrownCode(() => encodeValue(PgTypeOid.int8, B, 1))).toBe('DBP_ERR_PG_VALUE_TYPE');
    expect(thrownCode(() => encodeValue(PgTypeOid.int4, B, 1.5))).toBe('DBP_ERR_PG_VALUE_TYPE');
    expect(thrownCode(() => encodeValue(PgTypeOid.char, B, 'ab'))).toBe('DBP_ERR_PG_VALUE_TYPE');
    expect(thrownCode(() => encodeValue(PgTypeOid.bytea, T, 'text'))).toBe('DBP_ERR_PG_VALUE_TYPE');
  });

  it('sends anything else to transparent mode', () => {
    for (const oid of [2950 /* uuid */, 1186 /* interval */, 1007 /* int4[] */, 869 /* inet */]) {
      expect(isSupportedType(oid)).toBe(false);
      expect(thrownCode(() => decodeValue(oid, T, text('x')))).toBe('DBP_ERR_PG_UNSUPPORTED_TYPE');
    }
    expect(thrownCode(() => typeCodec(2950))).toBe('DBP_ERR_PG_UNSUPPORTED_TYPE');
    expect(thrownCode(() => decodeValue(PgTypeOid.int4, 2, text('1')))).toBe('DBP_ERR_PG_UNSUPPORTED_FORMAT');
    expect(Object.values(PgTypeOid).every(isSupportedType)).toBe(true);
  });

  it("applies Bind's format-code rule", () => {
    expect(formatAt([], 3)).toBe(0);
    expect(formatAt([1], 3)).toBe(1);
    expect(formatAt([0, 1], 1)).toBe(1);
  });
});

/** Fast exact comparison (jest's toEqual on Buffers costs ~1 ms, too slow for thousands of runs). */
function expectSame(actual: PgValue, expected: PgValue): void {
  if (Buffer.isBuffer(actual) && Buffer.isBuffer(expected)) {
    if (!actual.equals(expected)) expect(actual.toString('hex')).toBe(expected.toString('hex'));
  } else {
    expect(actual).toBe(expected); // Object.is: NaN equals NaN, -0 differs from 0
  }
}

/** Every value survives text and binary round trips, and both formats agree. */
function roundTrips(type: keyof typeof PgTypeOid, value: PgValue): void {
  const oid = PgTypeOid[type];
  const binary = encodeValue(oid, B, value);
  const asText = encodeValue(oid, T, value);
  expectSame(decodeValue(oid, B, binary), value);
  expectSame(decodeValue(oid, T, asText), value);
  expectSame(transcodeValue(oid, T, B, asText), binary);
  expectSame(transcodeValue(oid, B, T, binary), asText);
}

describe('round trips (property)', () => {
  const decimalDigits = (max: number) => fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: max }).map((d) => d.join(''));
  const canonicalNumeric = fc
    .tuple(fc.boolean(), fc.integer({ min: 1, max: 9 }), decimalDigits(40), decimalDigits(30), fc.boolean())
    .map(([negative, lead, rest, fraction, wholeIsZero]) => {
      const integer = wholeIsZero ? '0' : `${lead}${rest}`;
      const value = fraction ? `${integer}.${fraction}` : integer;
      return /[1-9]/.test(value) && negative ? `-${value}` : value;
    });

  it('numeric: exact strings through NBASE-10000 digits, checked against an independent BigInt reading', () => {
    fc.assert(
      fc.property(canonicalNumeric, (value) => {
        roundTrips('numeric', value);
        const bin = encodeValue(PgTypeOid.numeric, B, value);
        const [ndigits, weight, sign, dscale] = [bin.readUInt16BE(0), bin.readInt16BE(2), bin.readUInt16BE(4), bin.readUInt16BE(6)];
        let scaled = 0n; // value * 10000^(ndigits - weight - 1)
        for (let i = 0; i < ndigits; i++) scaled = scaled * 10000n + BigInt(bin.readUInt16BE(8 + i * 2));
        const [int, frac = ''] = value.replace('-', '').split('.');
        const exact = BigInt(int + frac); // value * 10^frac.length
        const shift = 4 * (ndigits - weight - 1) - frac.length;
        const lhs = shift >= 0 ? exact * 10n ** BigInt(shift) : exact;
        const rhs = shift >= 0 ? scaled : scaled * 10n ** BigInt(-shift);
        expect(lhs).toBe(rhs);
        expect(dscale).toBe(frac.length);
        expect(sign).toBe(value.startsWith('-') ? 0x4000 : 0);
      }),
      { numRuns: 1000 },
    );
  });

  it('numeric: exponent notation and non-canonical input normalise like the server', () => {
    expect(decodeValue(PgTypeOid.numeric, T, text('+001.50e2'))).toBe('150');
    expect(decodeValue(PgTypeOid.numeric, T, text('1.5e-3'))).toBe('0.0015');
    expect(decodeValue(PgTypeOid.numeric, T, text('-0.000'))).toBe('0.000');
    expect(decodeValue(PgTypeOid.numeric, T, text(' .5 '))).toBe('0.5');
  });

  it('int2, int4, int8 and oid over their whole ranges', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -0x8000, max: 0x7fff }),
        fc.integer({ min: -0x80000000, max: 0x7fffffff }),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (i2, i4, i8, oid) => {
          roundTrips('int2', i2);
          roundTrips('int4', i4);
          roundTrips('int8', i8);
          roundTrips('oid', oid);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('float8 and float4, including NaN, infinities, -0 and subnormals', () => {
    fc.assert(
      fc.property(fc.double(), fc.float(), (f8, f4) => {
        roundTrips('float8', f8);
        roundTrips('float4', f4);
      }),
      { numRuns: 1000 },
    );
  });

  it('timestamp and timestamptz over the whole range, agreeing with JavaScript Date where it reaches', () => {
    const micros = fc.bigInt({ min: cal.MIN_TIMESTAMP, max: cal.END_TIMESTAMP - 1n });
    fc.assert(
      fc.property(micros, (us) => {
        const bin = Buffer.alloc(8);
        bin.writeBigInt64BE(us);
        const ts = decodeValue(PgTypeOid.timestamp, B, bin) as string;
        const tstz = decodeValue(PgTypeOid.timestamptz, B, bin) as string;
        roundTrips('timestamp', ts);
        roundTrips('timestamptz', tstz);
        expectSame(encodeValue(PgTypeOid.timestamptz, B, tstz), bin);
        const ms = Number(us / 1000n) + Date.UTC(2000, 0, 1);
        if (us % 1000n === 0n && Math.abs(ms) < 8.64e15) expect(ts).toBe(isoFromDate(new Date(ms)));
      }),
      { numRuns: 1000 },
    );
    roundTrips('timestamp', 'infinity');
    roundTrips('timestamptz', '-infinity');
  });

  it('timestamptz text with an offset is converted to UTC', () => {
    expect(decodeValue(PgTypeOid.timestamptz, T, text('2024-01-01 00:00:00+05:30:15'))).toBe('2023-12-31 18:29:45+00');
    expect(decodeValue(PgTypeOid.timestamptz, T, text('2024-06-01T12:00:00.5Z'))).toBe('2024-06-01 12:00:00.5+00');
    expect(decodeValue(PgTypeOid.timestamp, T, text('2024-01-01 10:00:00+05'))).toBe('2024-01-01 10:00:00');
  });

  it('date over the whole range, agreeing with JavaScript Date where it reaches', () => {
    fc.assert(
      fc.property(fc.integer({ min: cal.MIN_DATE_DAYS, max: cal.END_DATE_DAYS - 1 }), (days) => {
        const bin = Buffer.alloc(4);
        bin.writeInt32BE(days);
        const date = decodeValue(PgTypeOid.date, B, bin) as string;
        roundTrips('date', date);
        expectSame(encodeValue(PgTypeOid.date, B, date), bin);
        const ms = Date.UTC(2000, 0, 1) + days * 86_400_000;
        if (Math.abs(ms) < 8.64e15) expect(date).toBe(isoFromDate(new Date(ms)).replace(' 00:00:00', ''));
      }),
      { numRuns: 1000 },
    );
    roundTrips('date', 'infinity');
  });

  it('time of day', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 86_400_000_000 }), (us) => {
      const bin = Buffer.alloc(8);
      bin.writeBigInt64BE(BigInt(us));
      roundTrips('time', decodeValue(PgTypeOid.time, B, bin));
    }));
  });

  it('text-like types, bytea, "char" and bool', () => {
    const unicode = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0'));
    fc.assert(
      fc.property(unicode, fc.uint8Array({ maxLength: 40 }), fc.integer({ min: 0, max: 255 }), fc.boolean(), (s, bytes, byte, bool) => {
        for (const type of ['text', 'varchar', 'bpchar', 'name', 'json', 'jsonb'] as const) roundTrips(type, s);
        roundTrips('bytea', Buffer.from(bytes));
        roundTrips('char', byte === 0 ? '' : String.fromCharCode(byte));
        roundTrips('bool', bool);
      }),
      { numRuns: 500 },
    );
  });
});

describe('type decoders on arbitrary bytes (fuzz)', () => {
  it('return a value or a typed error, never anything else', () => {
    const oids = Object.values(PgTypeOid);
    fc.assert(
      fc.property(fc.constantFrom(...oids), fc.constantFrom(0, 1), fc.uint8Array({ maxLength: 24 }), (oid, format, bytes) => {
        try {
          decodeValue(oid, format, Buffer.from(bytes));
        } catch (err) {
          expect(err).toBeInstanceOf(DbproxyError);
          expect((err as DbproxyError).code).toMatch(/^DBP_ERR_PG_/);
        }
      }),
      { numRuns: 5000 },
    );
  });
});

/** PostgreSQL's ISO text for a JavaScript Date (UTC): BC years, microsecond-trimmed fraction. */
function isoFromDate(d: Date): string {
  const year = d.getUTCFullYear();
  const shown = year <= 0 ? 1 - year : year;
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const ms = d.getUTCMilliseconds();
  const fraction = ms === 0 ? '' : `.${p(ms, 3).replace(/0+$/, '')}`;
  const base = `${p(shown, 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}${fraction}`;
  return year <= 0 ? `${base} BC` : base;
}
