// numeric: exact decimal strings <-> NBASE-10000 binary (sign, weight, dscale, digits); never via JS number.
import { Buffer } from 'node:buffer';
import { ValueInvalid, ValueOutOfRange } from '../errors';
import { toUtf8, type TypeCodec, utf8 } from './codec';
import { PgTypeOid } from './oids';

const NBASE = 10000;
const SIGN = { positive: 0x0000, negative: 0x4000, nan: 0xc000, infinity: 0xd000, negativeInfinity: 0xf000 } as const;
/** PostgreSQL's limits: 131072 digits before the point, 16383 after. */
const MAX_WEIGHT = 0x7fff;
const MAX_DSCALE = 0x3fff;
const MAX_EXPONENT = 1_000_000;

/** A finite numeric split the way the server stores it. */
interface NumericParts {
  readonly negative: boolean;
  /** Base-10000 digits, no leading or trailing zero groups. */
  readonly digits: readonly number[];
  /** Power of 10000 of the first digit. */
  readonly weight: number;
  /** Decimal digits after the point to display. */
  readonly dscale: number;
}

const SPECIAL_TEXT: Readonly<Record<string, string>> = {
  nan: 'NaN',
  infinity: 'Infinity',
  '+infinity': 'Infinity',
  inf: 'Infinity',
  '+inf': 'Infinity',
  '-infinity': '-Infinity',
  '-inf': '-Infinity',
};
const DECIMAL = /^([+-]?)(\d+\.?\d*|\.\d+)(?:e([+-]?\d+))?$/i;

/** Parses numeric text (with optional exponent) into parts; returns the special value's name for NaN/±Infinity. */
function parseNumeric(text: string): NumericParts | string {
  const trimmed = text.trim();
  const special = SPECIAL_TEXT[trimmed.toLowerCase()];
  if (special) return special;
  const match = DECIMAL.exec(trimmed);
  if (!match) throw ValueInvalid('numeric', 'text', JSON.stringify(trimmed.slice(0, 40)));
  const exponent = Number(match[3] ?? '0');
  if (Math.abs(exponent) > MAX_EXPONENT) throw ValueOutOfRange('numeric', `exponent ${match[3]}`);
  const [intPart, fracPart = ''] = match[2].split('.');
  const dscale = Math.max(0, fracPart.length - exponent);
  if (dscale > MAX_DSCALE) throw ValueOutOfRange('numeric', `display scale ${dscale}`);
  return fromDecimalDigits(match[1] === '-', intPart + fracPart, intPart.length + exponent, dscale);
}

/** Groups decimal digits (with the point after `pointAt` of them) into base-10000 digits aligned on the point. */
function fromDecimalDigits(negative: boolean, decimal: string, pointAt: number, dscale: number): NumericParts {
  const first = decimal.search(/[1-9]/);
  if (first < 0) return { negative: false, digits: [], weight: 0, dscale };
  const last = decimal.length - 1 - decimal.split('').reverse().join('').search(/[1-9]/);
  const significant = decimal.slice(first, last + 1);
  const exponentOfFirst = pointAt - first - 1; // power of ten of the first significant digit
  const weight = Math.floor(exponentOfFirst / 4);
  if (weight > MAX_WEIGHT) throw ValueOutOfRange('numeric', 'too many digits before the decimal point');
  const lead = exponentOfFirst - weight * 4; // digits before the first group boundary, minus one
  const padded = '0'.repeat(3 - lead) + significant;
  const groups = padded.padEnd(Math.ceil(padded.length / 4) * 4, '0');
  const digits: number[] = [];
  for (let i = 0; i < groups.length; i += 4) digits.push(Number(groups.slice(i, i + 4)));
  while (digits.length > 0 && digits[digits.length - 1] === 0) digits.pop();
  return { negative, digits, weight, dscale };
}

/** The server's numeric_out: all integer digits, then exactly dscale fractional digits. */
function formatNumeric(parts: NumericParts): string {
  const { digits, weight, dscale } = parts;
  let integer = '';
  for (let i = 0; i <= weight; i++) {
    const group = String(digits[i] ?? 0);
    integer += i === 0 ? group : group.padStart(4, '0');
  }
  if (integer === '') integer = '0';
  let fraction = '';
  for (let i = weight + 1; fraction.length < dscale; i++) {
    fraction += String(i >= 0 ? (digits[i] ?? 0) : 0).padStart(4, '0');
  }
  const sign = parts.negative && digits.length > 0 ? '-' : '';
  return sign + integer + (dscale > 0 ? `.${fraction.slice(0, dscale)}` : '');
}

function encodeBinaryParts(value: NumericParts | string): Buffer {
  if (typeof value === 'string') {
    const sign = value === 'NaN' ? SIGN.nan : value === 'Infinity' ? SIGN.infinity : SIGN.negativeInfinity;
    return header(0, 0, sign, 0);
  }
  const out = header(value.digits.length, value.weight, value.negative ? SIGN.negative : SIGN.positive, value.dscale);
  value.digits.forEach((digit, i) => out.writeUInt16BE(digit, 8 + i * 2));
  return out;
}

function header(ndigits: number, weight: number, sign: number, dscale: number): Buffer {
  const out = Buffer.alloc(8 + ndigits * 2);
  out.writeUInt16BE(ndigits, 0);
  out.writeInt16BE(weight, 2);
  out.writeUInt16BE(sign, 4);
  out.writeUInt16BE(dscale, 6);
  return out;
}

function decodeBinaryParts(bytes: Buffer): NumericParts | string {
  const fail = (detail: string) => ValueInvalid('numeric', 'binary', detail);
  if (bytes.length < 8) throw fail(`${bytes.length} bytes is shorter than the header`);
  const ndigits = bytes.readUInt16BE(0);
  const weight = bytes.readInt16BE(2);
  const sign = bytes.readUInt16BE(4);
  const dscale = bytes.readUInt16BE(6);
  if (bytes.length !== 8 + ndigits * 2) throw fail(`${ndigits} digits in ${bytes.length} bytes`);
  if (sign === SIGN.nan) return 'NaN';
  if (sign === SIGN.infinity) return 'Infinity';
  if (sign === SIGN.negativeInfinity) return '-Infinity';
  if (sign !== SIGN.positive && sign !== SIGN.negative) throw fail(`invalid sign 0x${sign.toString(16)}`);
  if (dscale > MAX_DSCALE) throw fail(`invalid display scale ${dscale}`);
  const digits: number[] = [];
  for (let i = 0; i < ndigits; i++) {
    const digit = bytes.readUInt16BE(8 + i * 2);
    if (digit >= NBASE) throw fail(`invalid digit ${digit}`);
    digits.push(digit);
  }
  // Normalize like the server (numeric_recv truncates digits hidden by dscale, then strips zeros).
  return fromDecimalDigits(sign === SIGN.negative, toDecimalDigits(digits, weight, dscale), weightPoint(weight), dscale);
}

/** Decimal digits from the highest integer group down to 10^-dscale; digits past dscale are dropped. */
function toDecimalDigits(digits: readonly number[], weight: number, dscale: number): string {
  let text = '';
  for (let position = Math.max(weight, 0); position >= -Math.ceil(dscale / 4); position--) {
    text += String(digits[weight - position] ?? 0).padStart(4, '0');
  }
  return text.slice(0, weightPoint(weight) + dscale);
}

/** How many decimal digits `toDecimalDigits` puts before the point. */
function weightPoint(weight: number): number {
  return (Math.max(weight, 0) + 1) * 4;
}

export const numericCodec: TypeCodec<string> = {
  name: 'numeric',
  oid: PgTypeOid.numeric,
  accepts: 'a decimal string',
  is: (value): value is string => typeof value === 'string',
  decodeText(bytes) {
    const parts = parseNumeric(utf8(bytes, 'numeric'));
    return typeof parts === 'string' ? parts : formatNumeric(parts);
  },
  encodeText(value) {
    const parts = parseNumeric(value);
    return toUtf8(typeof parts === 'string' ? parts : formatNumeric(parts), 'numeric');
  },
  decodeBinary(bytes) {
    const parts = decodeBinaryParts(bytes);
    return typeof parts === 'string' ? parts : formatNumeric(parts);
  },
  encodeBinary: (value) => encodeBinaryParts(parseNumeric(value)),
};
