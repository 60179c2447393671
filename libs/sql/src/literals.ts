// Turns literal tokens and bound parameter values into shard keys, exactly (integers stay integers).
import { isIntegerText, type ShardKey } from '@dbproxy/routing';
import { Tok, type Dialect } from './tokenizer';

/** A value bound to a placeholder, as the protocol layer decodes it. */
export type SqlValue = null | boolean | number | bigint | string | Uint8Array | Date;

/** A decoded key, or why the value cannot be a key. */
export type KeyValue = { readonly ok: true; readonly key: ShardKey } | { readonly ok: false; readonly reason: string };

const invalid = (reason: string): KeyValue => ({ ok: false, reason });

/** A numeric literal: integers exactly; decimals only when integral (`5.0`), else refused. */
function numberKey(text: string, start: number, end: number): KeyValue {
  let i = start;
  let negative = false;
  const first = text.charCodeAt(i);
  if (first === 0x2d || first === 0x2b) {
    negative = first === 0x2d;
    i++;
    while (i < end && text.charCodeAt(i) <= 0x20) i++;
  }
  let digitsOnly = end - i <= 15;
  let value = 0;
  for (let j = i; j < end && digitsOnly; j++) {
    const c = text.charCodeAt(j) - 0x30;
    if (c < 0 || c > 9) digitsOnly = false;
    else value = value * 10 + c;
  }
  if (digitsOnly && end > i) return { ok: true, key: negative ? -value : value };
  const body = text.slice(i, end).replace(/_/g, '');
  if (isIntegerText(body)) return { ok: true, key: negative ? -BigInt(body) : BigInt(body) };
  const m = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(body);
  if (m !== null && m[3] === undefined && /^0*$/.test(m[2] ?? '') && m[1] !== '') {
    const whole = negative ? -BigInt(m[1]) : BigInt(m[1]);
    const small = Number(whole);
    return { ok: true, key: Number.isSafeInteger(small) ? small : whole };
  }
  const asNumber = Number(body);
  if (m !== null && Number.isSafeInteger(asNumber)) return { ok: true, key: negative ? -asNumber : asNumber };
  return invalid(`${text.slice(start, end)} is not an integer`);
}

const MYSQL_ESCAPES: Record<string, string> = { '0': '\0', b: '\b', n: '\n', r: '\r', t: '\t', Z: '\x1a', "'": "'", '"': '"', '\\': '\\' };

/** Undoes MySQL backslash escapes (`\%` and `\_` keep their backslash) and doubled quotes. */
function unescapeMysql(body: string, quote: string): string {
  return body.replace(/\\(.)|(['"])\2/gs, (all: string, escaped: string | undefined, doubled: string | undefined) => {
    if (doubled !== undefined) return doubled === quote ? doubled : all;
    if (escaped === '%' || escaped === '_') return all;
    return MYSQL_ESCAPES[escaped ?? ''] ?? escaped ?? '';
  });
}

/** Undoes PostgreSQL E'' escapes: \n \t \b \f \r, octal, \xHH, \uXXXX, \UXXXXXXXX, and \ before anything else. */
function unescapePostgres(body: string): string {
  return body.replace(/''/g, "'").replace(/\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))/gs, (_all, oct?: string, hex?: string, u4?: string, u8?: string, ch?: string) => {
    if (oct !== undefined) return String.fromCharCode(parseInt(oct, 8));
    if (hex !== undefined) return String.fromCharCode(parseInt(hex, 16));
    if (u4 !== undefined || u8 !== undefined) return String.fromCodePoint(parseInt((u4 ?? u8) as string, 16));
    const map: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
    return map[ch as string] ?? (ch as string);
  });
}

/** A string literal's value per dialect and prefix (N'', E'', U&'', $tag$). */
function stringKey(raw: string, dialect: Dialect): KeyValue {
  if (raw.startsWith('$')) {
    const tag = raw.slice(0, raw.indexOf('$', 1) + 1);
    return { ok: true, key: raw.slice(tag.length, raw.length - tag.length) };
  }
  const upper = raw.charCodeAt(0) & ~0x20;
  if (dialect === 'postgresql') {
    if (upper === 0x55) return invalid('U& strings with unicode escapes are not supported as shard keys');
    if (upper === 0x45) return { ok: true, key: unescapePostgres(raw.slice(2, -1)) };
    const body = raw.slice(upper === 0x4e ? 2 : 1, -1);
    return { ok: true, key: body.replace(/''/g, "'") };
  }
  const offset = upper === 0x4e ? 1 : 0;
  return { ok: true, key: unescapeMysql(raw.slice(offset + 1, -1), raw[offset]) };
}

/** The key a literal token of the statement text stands for. */
export function literalKey(text: string, kind: number, start: number, end: number, dialect: Dialect): KeyValue {
  if (kind === Tok.Number) return numberKey(text, start, end);
  if (kind === Tok.String) return stringKey(text.slice(start, end), dialect);
  if (kind === Tok.HexNumber || kind === Tok.BitString) {
    return invalid(`${text.slice(start, end)} is a binary string literal; write the key as a number or a quoted string`);
  }
  return invalid('not a literal');
}

const utf8 = new TextDecoder();

/** The key a bound parameter value stands for. */
export function parameterKey(value: SqlValue | undefined): KeyValue {
  switch (typeof value) {
    case 'number':
      return Number.isSafeInteger(value) ? { ok: true, key: value } : invalid(`${value} is not an integer`);
    case 'bigint':
    case 'string':
      return { ok: true, key: value };
    case 'boolean':
      return invalid('a boolean cannot be a shard key');
    default:
      if (value === null || value === undefined) return invalid('NULL cannot be a shard key');
      if (value instanceof Uint8Array) return { ok: true, key: utf8.decode(value) };
      return invalid('a date cannot be a shard key');
  }
}
