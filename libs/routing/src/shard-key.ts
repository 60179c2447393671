// Normalizes shard keys: integers (number, bigint, or a string spelling a decimal integer) versus strings.
import { InvalidShardKey } from './errors';

/** A shard key as callers hold it. */
export type ShardKey = string | bigint | number;

/** The key after normalization: an exact integer or an opaque string. */
export type NormalizedKey = { kind: 'int'; value: bigint } | { kind: 'string'; value: string };

/**
 * True when `text` spells a decimal integer: an optional `+` or `-`, then one or more ASCII
 * digits, nothing else (no spaces, no exponent, no fraction). Such strings are integer keys.
 */
export function isIntegerText(text: string): boolean {
  const n = text.length;
  let i = 0;
  if (n > 0 && (text.charCodeAt(0) === 0x2b || text.charCodeAt(0) === 0x2d)) i = 1;
  if (i >= n) return false;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** Parses integer text (see isIntegerText); `+` is allowed, which BigInt() rejects. */
export function parseIntegerText(text: string): bigint {
  return BigInt(text.charCodeAt(0) === 0x2b ? text.slice(1) : text);
}

/** The exact integer a number key stands for; fractional or imprecise numbers are refused. */
export function integerOfNumber(key: number): bigint {
  if (!Number.isSafeInteger(key)) {
    throw InvalidShardKey(`${key} is not an integer in the exactly representable range; pass a bigint or a string`);
  }
  return BigInt(key);
}

/** Normalizes a key: numbers and bigints are integers, and so are strings that spell one. */
export function normalizeShardKey(key: ShardKey): NormalizedKey {
  if (typeof key === 'bigint') return { kind: 'int', value: key };
  if (typeof key === 'number') return { kind: 'int', value: integerOfNumber(key) };
  if (isIntegerText(key)) return { kind: 'int', value: parseIntegerText(key) };
  return { kind: 'string', value: key };
}
