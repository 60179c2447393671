// Character and document types (text, varchar, bpchar, name, json, jsonb) and bytea.
import { Buffer } from 'node:buffer';
import { ValueInvalid } from '../errors';
import { toUtf8, type TypeCodec, utf8 } from './codec';
import { PgTypeOid } from './oids';

const isString = (value: unknown): value is string => typeof value === 'string';

/** Types whose binary form is their text form. */
function stringCodec(name: string, oid: number): TypeCodec<string> {
  return {
    name,
    oid,
    accepts: 'a string',
    is: isString,
    decodeText: (bytes) => utf8(bytes, name),
    encodeText: (value) => toUtf8(value, name),
    decodeBinary: (bytes) => utf8(bytes, name, 'binary'),
    encodeBinary: (value) => toUtf8(value, name),
  };
}

export const textCodec = stringCodec('text', PgTypeOid.text);
export const varcharCodec = stringCodec('varchar', PgTypeOid.varchar);
export const bpcharCodec = stringCodec('bpchar', PgTypeOid.bpchar);
export const nameCodec = stringCodec('name', PgTypeOid.name);
/** json stays a string: parsing would lose key order, duplicate keys and number precision. */
export const jsonCodec = stringCodec('json', PgTypeOid.json);

const JSONB_VERSION = 1;

/** jsonb: text form in text; in binary a version byte (1) before the same text. */
export const jsonbCodec: TypeCodec<string> = {
  ...stringCodec('jsonb', PgTypeOid.jsonb),
  decodeBinary(bytes) {
    if (bytes.length < 1 || bytes[0] !== JSONB_VERSION) throw ValueInvalid('jsonb', 'binary', `unsupported jsonb version ${bytes[0]}`);
    return utf8(bytes.subarray(1), 'jsonb', 'binary');
  },
  encodeBinary: (value) => Buffer.concat([Buffer.from([JSONB_VERSION]), toUtf8(value, 'jsonb')]),
};

const HEX_BODY = /^(?:\s*[0-9a-fA-F]{2})*\s*$/;

/** bytea text: `\x` hex (what servers send by default), or the older escape format on input. */
function decodeByteaText(bytes: Buffer): Buffer {
  if (bytes.length >= 2 && bytes[0] === 0x5c && bytes[1] === 0x78) {
    const hex = bytes.toString('latin1', 2);
    if (!HEX_BODY.test(hex)) throw ValueInvalid('bytea', 'text', 'invalid hexadecimal data');
    return Buffer.from(hex.replace(/\s+/g, ''), 'hex');
  }
  return decodeByteaEscape(bytes);
}

function decodeByteaEscape(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x5c) {
      out[n++] = bytes[i];
    } else if (bytes[i + 1] === 0x5c) {
      out[n++] = 0x5c;
      i++;
    } else {
      const octal = bytes.toString('latin1', i + 1, i + 4);
      if (!/^[0-3][0-7]{2}$/.test(octal)) throw ValueInvalid('bytea', 'text', 'invalid escape sequence');
      out[n++] = parseInt(octal, 8);
      i += 3;
    }
  }
  return out.subarray(0, n);
}

export const byteaCodec: TypeCodec<Buffer> = {
  name: 'bytea',
  oid: PgTypeOid.bytea,
  accepts: 'a Buffer',
  is: (value): value is Buffer => Buffer.isBuffer(value),
  decodeText: decodeByteaText,
  encodeText: (value) => Buffer.from(`\\x${value.toString('hex')}`, 'latin1'),
  decodeBinary: (bytes) => Buffer.from(bytes),
  encodeBinary: (value) => Buffer.from(value),
};
