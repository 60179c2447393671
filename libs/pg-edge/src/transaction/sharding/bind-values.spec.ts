// Bind parameters as shard keys: text and binary int2/int4/int8/numeric/text, NULL, and unreadable types.
import type { Bind } from '@dbproxy/protocol-pg';
import { boundValues } from './bind-values';

const bind = (params: (Buffer | null)[], paramFormats: number[]): Bind => ({ type: 'Bind', portal: '', statement: '', paramFormats, params, resultFormats: [] });
const int = (bytes: number, value: bigint) => {
  const b = Buffer.alloc(bytes);
  if (bytes === 2) b.writeInt16BE(Number(value));
  else if (bytes === 4) b.writeInt32BE(Number(value));
  else b.writeBigInt64BE(value);
  return b;
};
/** PostgreSQL binary numeric from its parts. */
const numeric = (digits: number[], weight: number, negative = false, scale = 0) => {
  const b = Buffer.alloc(8 + 2 * digits.length);
  b.writeUInt16BE(digits.length, 0);
  b.writeInt16BE(weight, 2);
  b.writeUInt16BE(negative ? 0x4000 : 0, 4);
  b.writeUInt16BE(scale, 6);
  digits.forEach((d, i) => b.writeUInt16BE(d, 8 + 2 * i));
  return b;
};

describe('boundValues', () => {
  it('reads text parameters, untyped or typed, and NULL', () => {
    const got = boundValues(bind([Buffer.from('42'), Buffer.from('eu'), Buffer.from(' -7 '), Buffer.from('12.000'), null], []), [0, 25, 20, 1700, 23]);
    expect(got).toEqual({ values: ['42', 'eu', '-7', '12', null], unreadable: [] });
  });

  it('reads binary int2, int4, int8 and numeric', () => {
    const got = boundValues(bind([int(2, -3n), int(4, 70000n), int(8, -9007199254740993n), numeric([1, 2345], 1), numeric([12], 0, true)], [1]), [21, 23, 20, 1700, 1700]);
    expect(got.values).toEqual([-3, 70000, -9007199254740993n, 12345n, -12n]);
    expect(got.unreadable).toEqual([]);
  });

  it('turns a fractional numeric into a number (the router refuses it as a key)', () => {
    expect(boundValues(bind([numeric([1, 5000], 0, false, 1)], [1]), [1700]).values).toEqual([1.5]);
    expect(boundValues(bind([Buffer.from('2.5')], [0]), [1700]).values).toEqual([2.5]);
  });

  it('marks parameters of other types, and untyped binary ones, as unreadable', () => {
    const got = boundValues(bind([Buffer.alloc(8), Buffer.from([1]), Buffer.from('t')], [1, 1, 0]), [701, 0, 16]);
    expect(got.unreadable).toEqual([
      { index: 0, oid: 701, format: 'binary' },
      { index: 1, oid: 0, format: 'binary' },
      { index: 2, oid: 16, format: 'text' },
    ]);
  });
});
