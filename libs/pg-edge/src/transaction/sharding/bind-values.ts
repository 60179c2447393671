// The values of one Bind as the router reads shard keys: int2/int4/int8/numeric/text/varchar
// parameters in text or binary format; anything else is kept as "unreadable" so that, if it turns
// out to be a shard key, the execution fails closed naming the parameter and its type.
import type { Bind } from '@dbproxy/protocol-pg';
import type { SqlValue } from '@dbproxy/sql';

const OID = { int8: 20, int2: 21, int4: 23, text: 25, bpchar: 1042, varchar: 1043, numeric: 1700, name: 19, unknown: 705 } as const;
const TEXTUAL: ReadonlySet<number> = new Set([OID.text, OID.bpchar, OID.varchar, OID.name, OID.unknown, 0]);

/** A parameter the router cannot read as a key: which one, its type and format. */
export interface UnreadableParameter {
  readonly index: number;
  readonly oid: number;
  readonly format: 'text' | 'binary';
}

export interface BoundValues {
  readonly values: SqlValue[];
  readonly unreadable: UnreadableParameter[];
}

/** A Date stands for an unreadable value: the router refuses it as a key (DBP_ERR_SQL_SHARD_KEY_INVALID), which we then explain. */
const UNREADABLE: SqlValue = new Date(0);

export function boundValues(bind: Bind, types: readonly number[]): BoundValues {
  const values: SqlValue[] = [];
  const unreadable: UnreadableParameter[] = [];
  for (let i = 0; i < bind.params.length; i++) {
    const raw = bind.params[i];
    const format = formatOf(bind.paramFormats, i);
    const oid = types[i] ?? 0;
    if (raw === null) {
      values.push(null);
      continue;
    }
    const value = format === 'text' ? textValue(raw, oid) : binaryValue(raw, oid);
    if (value === undefined) {
      unreadable.push({ index: i, oid, format });
      values.push(UNREADABLE);
    } else values.push(value);
  }
  return { values, unreadable };
}

function formatOf(formats: readonly number[], i: number): 'text' | 'binary' {
  const code = formats.length === 0 ? 0 : formats.length === 1 ? formats[0] : formats[i];
  return code === 1 ? 'binary' : 'text';
}

function textValue(raw: Buffer, oid: number): SqlValue | undefined {
  const text = raw.toString('utf8');
  if (TEXTUAL.has(oid)) return text;
  if (oid === OID.int2 || oid === OID.int4 || oid === OID.int8) return /^\s*[-+]?\d+\s*$/.test(text) ? text.trim().replace(/^\+/, '') : undefined;
  if (oid === OID.numeric) return numericText(text.trim());
  return undefined;
}

/** Numeric text: an integer (trailing zero decimals dropped) stays text; a fraction becomes a number the router refuses. */
function numericText(text: string): SqlValue | undefined {
  const m = /^([-+]?\d+)(?:\.(\d*))?$/.exec(text);
  if (!m) return undefined;
  if (m[2] === undefined || /^0*$/.test(m[2])) return m[1].replace(/^\+/, '');
  return Number(text);
}

function binaryValue(raw: Buffer, oid: number): SqlValue | undefined {
  if (oid === OID.int2 && raw.length === 2) return raw.readInt16BE(0);
  if (oid === OID.int4 && raw.length === 4) return raw.readInt32BE(0);
  if (oid === OID.int8 && raw.length === 8) return raw.readBigInt64BE(0);
  if (oid === OID.numeric) return binaryNumeric(raw);
  if (TEXTUAL.has(oid) && oid !== 0) return raw.toString('utf8');
  return undefined; // type 0 in binary: the server would infer it; we cannot read it
}

/** PostgreSQL's binary numeric: ndigits, weight, sign, dscale, then base-10000 digits. */
function binaryNumeric(raw: Buffer): SqlValue | undefined {
  if (raw.length < 8) return undefined;
  const ndigits = raw.readUInt16BE(0);
  const weight = raw.readInt16BE(2);
  const sign = raw.readUInt16BE(4);
  if (sign === 0xc000 || raw.length !== 8 + 2 * ndigits) return undefined; // NaN, or malformed
  let integer = 0n;
  let fraction = '';
  for (let i = 0; i < ndigits; i++) {
    const digit = raw.readUInt16BE(8 + 2 * i);
    if (i <= weight) integer = integer * 10000n + BigInt(digit);
    else fraction = fraction.padEnd(4 * (i - weight - 1), '0') + String(digit).padStart(4, '0');
  }
  for (let i = ndigits; i <= weight; i++) integer *= 10000n;
  const negative = sign === 0x4000;
  if (/^0*$/.test(fraction)) return negative ? -integer : integer;
  return Number(`${negative ? '-' : ''}${integer}.${fraction}`); // a fraction is no key: the router refuses it
}
