// One-shot encoders: each returns a Buffer allocated once at its exact size.
import { Buffer } from 'node:buffer';
import { bulkFrameSize as bulkSize, commandSize, writeCommand, type CommandArg } from './bytes-out';
import { decimalWidth } from './digits';
import type { RespValue } from './value';
import { doubleText, RespWriter } from './writer';

/** `encodeCommand(['SET', key, value])`: a multibulk array of bulk strings in one exact-size Buffer; Buffer args are copied as bytes. */
export function encodeCommand(args: readonly CommandArg[]): Buffer {
  const out = Buffer.allocUnsafe(commandSize(args));
  writeCommand(out, 0, args);
  return out;
}

/** Exact encoded size of `v`. */
export function encodedLength(v: RespValue): number {
  switch (v.type) {
    case 'simple': return Buffer.byteLength(v.value) + 3;
    case 'error': return v.bulk ? bulkSize(Buffer.byteLength(v.message)) : Buffer.byteLength(v.message) + 3;
    case 'integer': return (typeof v.value === 'bigint' ? v.value.toString().length : decimalWidth(v.value)) + 3;
    case 'bulk': return bulkSize(v.value.length);
    case 'null': return v.form === 'null' ? 3 : 5;
    case 'boolean': return 4;
    case 'double': return doubleText(v.value).length + 3;
    case 'bignum': return v.value.toString().length + 3;
    case 'verbatim': return bulkSize(v.value.length + 4);
    case 'array':
    case 'set':
    case 'push': return v.items.reduce((size, item) => size + encodedLength(item), 3 + decimalWidth(v.items.length));
    case 'map':
    case 'attribute': {
      let size = 3 + decimalWidth(v.entries.length);
      for (const [key, val] of v.entries) size += encodedLength(key) + encodedLength(val);
      return v.type === 'attribute' ? size + encodedLength(v.value) : size;
    }
  }
}

/** Any value as one Buffer (RESP2 types stay RESP2; RESP3 types need a RESP3 peer). */
export function encodeValue(v: RespValue): Buffer {
  return new RespWriter(encodedLength(v)).value(v).flush();
}

export const encodeSimpleString = (value: string): Buffer => encodeValue({ type: 'simple', value });
export const encodeError = (message: string): Buffer => encodeValue({ type: 'error', message, bulk: false });
export const encodeInteger = (value: number | bigint): Buffer => encodeValue({ type: 'integer', value });
export const encodeBulk = (value: Buffer | string): Buffer =>
  encodeValue({ type: 'bulk', value: typeof value === 'string' ? Buffer.from(value) : value });
export const encodeNull = (form: 'bulk' | 'array' | 'null' = 'bulk'): Buffer => encodeValue({ type: 'null', form });
export const encodeArray = (items: readonly RespValue[]): Buffer => encodeValue({ type: 'array', items });
