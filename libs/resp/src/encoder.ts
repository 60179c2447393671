// One-shot encoders: each returns a Buffer allocated once at its exact size.
import { decimalWidth } from './digits';
import type { RespValue } from './value';
import { doubleText, RespWriter, type CommandArg } from './writer';

/** Encoded size of a bulk (or bulk error / verbatim) frame carrying `n` bytes. */
function bulkSize(n: number): number {
  return 1 + decimalWidth(n) + 2 + n + 2;
}

function argLength(arg: CommandArg): number {
  if (typeof arg === 'string') return Buffer.byteLength(arg);
  if (typeof arg !== 'number') return arg.length;
  return Number.isSafeInteger(arg) ? decimalWidth(arg) : String(arg).length;
}

/** `encodeCommand(['SET', key, value])`: a multibulk array of bulk strings; Buffer args are copied as bytes. */
export function encodeCommand(args: readonly CommandArg[]): Buffer {
  let size = 1 + decimalWidth(args.length) + 2;
  for (const arg of args) size += bulkSize(argLength(arg));
  return new RespWriter(size).command(args).flush();
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
