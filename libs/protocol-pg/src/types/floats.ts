// float4 and float8: IEEE 754 in binary, shortest round-tripping decimal in text, NaN and ±Infinity.
import { Buffer } from 'node:buffer';
import { ValueInvalid, ValueOutOfRange } from '../errors';
import { expectLength, type TypeCodec, utf8 } from './codec';
import { PgTypeOid } from './oids';

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const SPECIAL: Readonly<Record<string, number>> = {
  nan: NaN,
  infinity: Infinity,
  '+infinity': Infinity,
  '-infinity': -Infinity,
  inf: Infinity,
  '+inf': Infinity,
  '-inf': -Infinity,
};

/** float4in/float8in: decimal or NaN/Infinity; overflow and underflow to zero are errors, as on the server. */
function parseFloatText(bytes: Buffer, type: string, round: (n: number) => number): number {
  const text = utf8(bytes, type).trim();
  const special = SPECIAL[text.toLowerCase()];
  if (special !== undefined) return special;
  if (!DECIMAL.test(text)) throw ValueInvalid(type, 'text', JSON.stringify(text.slice(0, 40)));
  const value = round(Number(text));
  const mantissa = text.split(/e/i)[0];
  if (!Number.isFinite(value) || (value === 0 && /[1-9]/.test(mantissa))) throw ValueOutOfRange(type, text);
  return value;
}

function formatSpecial(value: number): string | undefined {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (Object.is(value, -0)) return '-0';
  return undefined;
}

/** The shortest decimal that reads back as the same float4 (what the server prints with extra_float_digits=1). */
function formatFloat4(value: number): string {
  const special = formatSpecial(value);
  if (special !== undefined) return special;
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return String(candidate);
  }
  return String(Number(value.toPrecision(9)));
}

const isNumber = (value: unknown): value is number => typeof value === 'number';

export const float8Codec: TypeCodec<number> = {
  name: 'float8',
  oid: PgTypeOid.float8,
  accepts: 'a number',
  is: isNumber,
  decodeText: (bytes) => parseFloatText(bytes, 'float8', (n) => n),
  encodeText: (value) => Buffer.from(formatSpecial(value) ?? String(value)),
  decodeBinary(bytes) {
    expectLength(bytes, 8, 'float8');
    return bytes.readDoubleBE(0);
  },
  encodeBinary(value) {
    const out = Buffer.allocUnsafe(8);
    out.writeDoubleBE(value);
    return out;
  },
};

export const float4Codec: TypeCodec<number> = {
  name: 'float4',
  oid: PgTypeOid.float4,
  accepts: 'a number',
  is: isNumber,
  decodeText: (bytes) => parseFloatText(bytes, 'float4', Math.fround),
  encodeText: (value) => Buffer.from(formatFloat4(checkFloat4(value))),
  decodeBinary(bytes) {
    expectLength(bytes, 4, 'float4');
    return bytes.readFloatBE(0);
  },
  encodeBinary(value) {
    const out = Buffer.allocUnsafe(4);
    out.writeFloatBE(checkFloat4(value));
    return out;
  },
};

/** A number is encodable as float4 only if it is one; rounding 0.1 to float4 would silently change the value. */
function checkFloat4(value: number): number {
  if (!Number.isNaN(value) && Math.fround(value) !== value) throw ValueOutOfRange('float4', `${value} is not representable exactly`);
  return value;
}
