// Fixed-size types: bool, int2, int4, int8, oid, float4, float8 and "char".
import { Buffer } from 'node:buffer';
import { ValueInvalid, ValueOutOfRange } from '../errors';
import { expectLength, type TypeCodec, utf8 } from './codec';
import { PgTypeOid } from './oids';

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;

function parseIntegerText(bytes: Buffer, type: string): string {
  const text = utf8(bytes, type);
  if (!INTEGER_TEXT.test(text)) throw ValueInvalid(type, 'text', JSON.stringify(text.slice(0, 40)));
  return text.trim();
}

function boundedInteger(name: string, oid: number, size: 2 | 4, min: number, max: number): TypeCodec<number> {
  const check = (value: number): number => {
    if (value < min || value > max) throw ValueOutOfRange(name, String(value));
    return value;
  };
  return {
    name,
    oid,
    accepts: 'an integer number',
    is: (value): value is number => typeof value === 'number' && Number.isInteger(value),
    decodeText: (bytes) => check(Number(parseIntegerText(bytes, name)) + 0),
    encodeText: (value) => Buffer.from(String(check(value) + 0)),
    decodeBinary(bytes) {
      expectLength(bytes, size, name);
      if (oid === PgTypeOid.oid) return bytes.readUInt32BE(0);
      return size === 2 ? bytes.readInt16BE(0) : bytes.readInt32BE(0);
    },
    encodeBinary(value) {
      const out = Buffer.allocUnsafe(size);
      if (oid === PgTypeOid.oid) out.writeUInt32BE(check(value));
      else if (size === 2) out.writeInt16BE(check(value));
      else out.writeInt32BE(check(value));
      return out;
    },
  };
}

export const int2Codec = boundedInteger('int2', PgTypeOid.int2, 2, -0x8000, 0x7fff);
export const int4Codec = boundedInteger('int4', PgTypeOid.int4, 4, -0x80000000, 0x7fffffff);
const oidBase = boundedInteger('oid', PgTypeOid.oid, 4, 0, 0xffffffff);
/** oid text input also takes negative int32 values, which wrap (oidin('-1') is 4294967295). */
export const oidCodec: TypeCodec<number> = {
  ...oidBase,
  decodeText(bytes) {
    const value = Number(parseIntegerText(bytes, 'oid'));
    if (value < 0 && value >= -0x80000000) return value + 0x100000000;
    return oidBase.decodeText(bytes);
  },
};

const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

export const int8Codec: TypeCodec<bigint> = {
  name: 'int8',
  oid: PgTypeOid.int8,
  accepts: 'a bigint',
  is: (value): value is bigint => typeof value === 'bigint',
  decodeText(bytes) {
    const value = BigInt(parseIntegerText(bytes, 'int8'));
    if (value < INT8_MIN || value > INT8_MAX) throw ValueOutOfRange('int8', String(value));
    return value;
  },
  encodeText: (value) => Buffer.from(value.toString()),
  decodeBinary(bytes) {
    expectLength(bytes, 8, 'int8');
    return bytes.readBigInt64BE(0);
  },
  encodeBinary(value) {
    if (value < INT8_MIN || value > INT8_MAX) throw ValueOutOfRange('int8', String(value));
    const out = Buffer.allocUnsafe(8);
    out.writeBigInt64BE(value);
    return out;
  },
};

const TRUE_WORDS = ['true', 'yes'];
const FALSE_WORDS = ['false', 'no'];

/** PostgreSQL's boolin: unambiguous prefixes of true/yes/false/no, on/off, 1/0; case-insensitive. */
function parseBool(text: string): boolean | undefined {
  const s = text.trim().toLowerCase();
  if (s === '') return undefined;
  if (s === '1' || s === 'on' || TRUE_WORDS.some((w) => w.startsWith(s))) return true;
  if (s === '0' || s === 'of' || s === 'off' || FALSE_WORDS.some((w) => w.startsWith(s))) return false;
  return undefined;
}

export const boolCodec: TypeCodec<boolean> = {
  name: 'bool',
  oid: PgTypeOid.bool,
  accepts: 'a boolean',
  is: (value): value is boolean => typeof value === 'boolean',
  decodeText(bytes) {
    const value = parseBool(utf8(bytes, 'bool'));
    if (value === undefined) throw ValueInvalid('bool', 'text', JSON.stringify(bytes.toString('latin1').slice(0, 40)));
    return value;
  },
  encodeText: (value) => Buffer.from(value ? 't' : 'f'),
  decodeBinary(bytes) {
    expectLength(bytes, 1, 'bool');
    return bytes[0] !== 0;
  },
  encodeBinary: (value) => Buffer.from([value ? 1 : 0]),
};

/**
 * "char" is one byte, as a string of 0 or 1 characters with code below 256 ('' is the zero byte).
 * Text form: the byte itself when ASCII, `\ooo` octal when the high bit is set (PostgreSQL 15+).
 */
export const charCodec: TypeCodec<string> = {
  name: 'char',
  oid: PgTypeOid.char,
  accepts: 'a string of at most one character below U+0100',
  is: (value): value is string => typeof value === 'string' && value.length <= 1 && (value === '' || value.charCodeAt(0) < 256),
  decodeText(bytes) {
    const text = bytes.toString('latin1');
    if (/^\\[0-7]{3}$/.test(text)) return byteToChar(parseInt(text.slice(1), 8) & 0xff);
    return byteToChar(bytes.length > 0 ? bytes[0] : 0);
  },
  encodeText(value) {
    const code = value === '' ? 0 : value.charCodeAt(0);
    if (code >= 0x80) return Buffer.from(`\\${code.toString(8).padStart(3, '0')}`);
    return code === 0 ? Buffer.alloc(0) : Buffer.from([code]);
  },
  decodeBinary(bytes) {
    expectLength(bytes, 1, 'char');
    return byteToChar(bytes[0]);
  },
  encodeBinary: (value) => Buffer.from([value === '' ? 0 : value.charCodeAt(0)]),
};

function byteToChar(byte: number): string {
  return byte === 0 ? '' : String.fromCharCode(byte);
}
