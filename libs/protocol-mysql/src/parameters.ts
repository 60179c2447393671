// The binary parameter block shared by COM_STMT_EXECUTE and COM_QUERY query attributes:
// NULL bitmap, new-params-bound flag, types (with names under CLIENT_QUERY_ATTRIBUTES), values.
import { Buffer } from 'node:buffer';
import { inferParameterType, readBinaryValue, writeBinaryValue } from './binary-values';
import { isAlwaysBinaryType, isBlobType, isParameterType, PARAM_UNSIGNED, type MysqlValue } from './column-types';
import type { PacketReader, PacketWriter } from './cursor';
import { MalformedPacket, UnsupportedType } from './errors';

export interface ParameterType {
  /** A ColumnType byte. */
  readonly type: number;
  readonly unsigned: boolean;
}

/** A value with the wire type it was (or will be) sent as. */
export interface TypedParameter extends ParameterType {
  readonly value: MysqlValue;
}

/** A named query attribute (CLIENT_QUERY_ATTRIBUTES). */
export interface QueryAttribute extends TypedParameter {
  readonly name: string;
}

export interface ParameterBlock {
  readonly newParamsBound: boolean;
  readonly types: readonly ParameterType[];
  readonly names: readonly string[];
  readonly values: readonly MysqlValue[];
  /** Indexes skipped because their data came through COM_STMT_SEND_LONG_DATA (value null here). */
  readonly longData: readonly number[];
}

export interface ParameterBlockOptions {
  /** Names follow each type (CLIENT_QUERY_ATTRIBUTES). */
  readonly withNames: boolean;
  /** Types bound by an earlier execute, used when this one does not resend them. */
  readonly previousTypes?: readonly ParameterType[];
  readonly longDataParams?: ReadonlySet<number>;
  readonly encoding?: BufferEncoding;
  /**
   * Decode only the first `valueCount` values (a proxy routing on a few of them): `values` then
   * has that many entries and the rest of the block is left unread.
   */
  readonly valueCount?: number;
}

export function readParameterBlock(r: PacketReader, count: number, options: ParameterBlockOptions): ParameterBlock {
  const bitmap = r.bytes(Math.ceil(count / 8), 'parameter NULL bitmap');
  const bound = r.u8('new params bound flag');
  if (bound > 1) throw MalformedPacket(`new-params-bound flag ${bound}`);
  const types: ParameterType[] = [];
  const names: string[] = [];
  if (bound === 1) {
    for (let i = 0; i < count; i++) {
      const type = r.u8('parameter type');
      if (!isParameterType(type)) throw UnsupportedType(type);
      types.push({ type, unsigned: (r.u8('parameter flags') & PARAM_UNSIGNED) !== 0 });
      names.push(options.withNames ? r.lenencString('parameter name', options.encoding) : '');
    }
  } else {
    const previous = options.previousTypes;
    if (!previous || previous.length < count) throw MalformedPacket('parameter types were never sent for this statement');
    for (let i = 0; i < count; i++) {
      types.push(previous[i]);
      names.push('');
    }
  }
  const values: MysqlValue[] = [];
  const longData: number[] = [];
  const decoded = Math.min(count, options.valueCount ?? count);
  for (let i = 0; i < decoded; i++) {
    if ((bitmap[i >> 3] & (1 << (i & 7))) !== 0) values.push(null);
    else if (options.longDataParams?.has(i)) {
      longData.push(i);
      values.push(null);
    } else {
      const { type, unsigned } = types[i];
      values.push(readBinaryValue(r, { type, unsigned, binary: isBlobType(type) || isAlwaysBinaryType(type), encoding: options.encoding }));
    }
  }
  return { newParamsBound: bound === 1, types, names, values, longData };
}

/** A parameter given as a bare value gets the type a typical client would pick. */
export function toTypedParameter(param: MysqlValue | TypedParameter): TypedParameter {
  if (param !== null && typeof param === 'object' && !Buffer.isBuffer(param) && 'value' in param) return param;
  return { ...inferParameterType(param), value: param };
}

/** Writes bitmap, bound flag (always 1 unless `sendTypes` is false), types, names and values. */
export function writeParameterBlock(w: PacketWriter, params: readonly TypedParameter[], names: readonly string[] | null, sendTypes = true): void {
  for (const p of params) if (!isParameterType(p.type)) throw UnsupportedType(p.type);
  const bitmap = Buffer.alloc(Math.ceil(params.length / 8));
  params.forEach((p, i) => {
    if (p.value === null) bitmap[i >> 3] |= 1 << (i & 7);
  });
  w.bytes(bitmap).u8(sendTypes ? 1 : 0);
  if (sendTypes) {
    params.forEach((p, i) => {
      w.u8(p.type).u8(p.unsigned ? PARAM_UNSIGNED : 0);
      if (names) w.lenencString(names[i] ?? '');
    });
  }
  for (const p of params) if (p.value !== null) writeBinaryValue(w, p.type, p.unsigned, p.value);
}
