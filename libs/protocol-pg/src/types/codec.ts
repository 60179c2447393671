// The shape of a type codec and the helpers every codec shares (strict UTF-8, exact lengths).
import { Buffer } from 'node:buffer';
import { ValueInvalid, ValueType } from '../errors';

/** A decoded value: the JavaScript representation each type uses (see README's type table). */
export type PgValue = boolean | number | bigint | string | Buffer;

/** Text and binary wire formats of one type, lossless in both directions. */
export interface TypeCodec<T extends PgValue> {
  readonly name: string;
  readonly oid: number;
  /** What `encode*` accepts, for error messages: 'a boolean', 'a bigint', ... */
  readonly accepts: string;
  is(value: PgValue): value is T;
  decodeText(bytes: Buffer): T;
  encodeText(value: T): Buffer;
  decodeBinary(bytes: Buffer): T;
  encodeBinary(value: T): Buffer;
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 strictly: invalid bytes are an error, not U+FFFD (which would be lossy). */
export function utf8(bytes: Buffer, type: string, format: 'text' | 'binary' = 'text'): string {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    throw ValueInvalid(type, format, 'not valid UTF-8');
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Encodes a string as UTF-8, refusing what PostgreSQL text cannot hold (NUL) or UTF-8 cannot carry (lone surrogates). */
export function toUtf8(value: string, type: string): Buffer {
  if (value.includes('\0')) throw ValueInvalid(type, 'text', 'contains a NUL character');
  if (LONE_SURROGATE.test(value)) throw ValueInvalid(type, 'text', 'contains an unpaired surrogate');
  return Buffer.from(value, 'utf8');
}

export function expectLength(bytes: Buffer, length: number, type: string): void {
  if (bytes.length !== length) throw ValueInvalid(type, 'binary', `${bytes.length} bytes, expected ${length}`);
}

/** Checks the JavaScript kind of a value before encoding it. */
export function checkKind<T extends PgValue>(codec: TypeCodec<T>, value: PgValue): T {
  if (!codec.is(value)) throw ValueType(codec.name, codec.accepts, describeKind(value));
  return value;
}

function describeKind(value: PgValue): string {
  return Buffer.isBuffer(value) ? 'a Buffer' : `a ${typeof value}`;
}
