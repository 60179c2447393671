// Looks up the codec of a type OID and converts values between wire formats and JavaScript.
import { FormatCode } from '../codes';
import { UnsupportedFormat, UnsupportedType } from '../errors';
import { checkKind, type PgValue, type TypeCodec } from './codec';
import { dateCodec, timeCodec, timestampCodec, timestamptzCodec } from './datetime';
import { float4Codec, float8Codec } from './floats';
import { numericCodec } from './numeric';
import { boolCodec, charCodec, int2Codec, int4Codec, int8Codec, oidCodec } from './scalars';
import { bpcharCodec, byteaCodec, jsonbCodec, jsonCodec, nameCodec, textCodec, varcharCodec } from './text';

const CODECS: ReadonlyMap<number, TypeCodec<PgValue>> = new Map(
  (
    [
      boolCodec, byteaCodec, charCodec, nameCodec, int8Codec, int2Codec, int4Codec, textCodec, oidCodec, jsonCodec,
      float4Codec, float8Codec, bpcharCodec, varcharCodec, dateCodec, timeCodec, timestampCodec, timestamptzCodec,
      numericCodec, jsonbCodec,
    ] as TypeCodec<PgValue>[]
  ).map((codec) => [codec.oid, codec]),
);

/** Whether values of this type can be decoded and re-encoded without loss. */
export function isSupportedType(oid: number): boolean {
  return CODECS.has(oid);
}

/** The codec for a type; DBP_ERR_PG_UNSUPPORTED_TYPE for anything else (use transparent mode). */
export function typeCodec(oid: number): TypeCodec<PgValue> {
  const codec = CODECS.get(oid);
  if (!codec) throw UnsupportedType(oid);
  return codec;
}

function checkFormat(format: number): FormatCode {
  if (format !== FormatCode.Text && format !== FormatCode.Binary) throw UnsupportedFormat(format);
  return format;
}

/** Decodes one column or parameter value (not NULL: a null value needs no codec). */
export function decodeValue(oid: number, format: number, bytes: Buffer): PgValue {
  const codec = typeCodec(oid);
  return checkFormat(format) === FormatCode.Binary ? codec.decodeBinary(bytes) : codec.decodeText(bytes);
}

/** Encodes one value for the wire in the given format. */
export function encodeValue(oid: number, format: number, value: PgValue): Buffer {
  const codec = typeCodec(oid);
  const checked = checkKind(codec, value);
  return checkFormat(format) === FormatCode.Binary ? codec.encodeBinary(checked) : codec.encodeText(checked);
}

/** Re-encodes a value from one format to the other (e.g. a text parameter for a binary-only path). */
export function transcodeValue(oid: number, from: number, to: number, bytes: Buffer): Buffer {
  if (checkFormat(from) === checkFormat(to)) {
    typeCodec(oid);
    return bytes;
  }
  return encodeValue(oid, to, decodeValue(oid, from, bytes));
}

/**
 * The format of parameter or column `index` under Bind's rule: no codes means all text,
 * one code applies to every value, otherwise one code per value.
 */
export function formatAt(formats: readonly number[], index: number): number {
  if (formats.length === 0) return FormatCode.Text;
  return formats.length === 1 ? formats[0] : (formats[index] ?? FormatCode.Text);
}
