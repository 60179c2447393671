// Binary-protocol values (COM_STMT_EXECUTE parameters and binary result rows) to and from typed JS values.
import { Buffer } from 'node:buffer';
import { ColumnType, isAlwaysBinaryType, isLengthEncodedType, type MysqlDate, type MysqlDateTime, type MysqlTime, type MysqlValue } from './column-types';
import type { PacketReader, PacketWriter } from './cursor';
import { InvalidValue, MalformedPacket, UnsupportedType } from './errors';

/** How to read one value: its type byte, signedness, and whether byte strings stay bytes. */
export interface BinaryValueSpec {
  readonly type: number;
  readonly unsigned: boolean;
  /** True for binary data (binary collation, BLOB parameters): byte strings decode to Buffer. */
  readonly binary: boolean;
  /** Encoding of text values; utf8 unless the collation says otherwise. */
  readonly encoding?: BufferEncoding;
}

/** Reads one non-NULL binary value. */
export function readBinaryValue(r: PacketReader, spec: BinaryValueSpec): MysqlValue {
  const { type, unsigned } = spec;
  switch (type) {
    case ColumnType.Null:
      return null;
    case ColumnType.Tiny:
      return unsigned ? r.u8() : r.i8();
    case ColumnType.Short:
    case ColumnType.Year:
      return unsigned || type === ColumnType.Year ? r.u16() : r.i16();
    case ColumnType.Long:
    case ColumnType.Int24:
      return unsigned ? r.u32() : r.i32();
    case ColumnType.LongLong:
      return unsigned ? r.u64() : r.i64();
    case ColumnType.Float:
      return r.f32();
    case ColumnType.Double:
      return r.f64();
    case ColumnType.Date:
    case ColumnType.NewDate:
      return toDate(readDateTime(r));
    case ColumnType.DateTime:
    case ColumnType.Timestamp:
      return readDateTime(r);
    case ColumnType.Time:
      return readTime(r);
    default:
      return readByteString(r, spec);
  }
}

function readByteString(r: PacketReader, spec: BinaryValueSpec): MysqlValue {
  if (!isLengthEncodedType(spec.type)) throw UnsupportedType(spec.type);
  const bytes = r.lenencBytes('binary value');
  if (spec.type === ColumnType.Decimal || spec.type === ColumnType.NewDecimal) return bytes.toString('latin1');
  if (spec.binary || isAlwaysBinaryType(spec.type)) return bytes;
  return bytes.toString(spec.encoding ?? 'utf8');
}

function readDateTime(r: PacketReader): MysqlDateTime {
  const length = r.u8('datetime length');
  if (length !== 0 && length !== 4 && length !== 7 && length !== 11) throw MalformedPacket(`datetime length ${length}`);
  const year = length >= 4 ? r.u16() : 0;
  const month = length >= 4 ? r.u8() : 0;
  const day = length >= 4 ? r.u8() : 0;
  const hour = length >= 7 ? r.u8() : 0;
  const minute = length >= 7 ? r.u8() : 0;
  const second = length >= 7 ? r.u8() : 0;
  const microsecond = length === 11 ? r.u32() : 0;
  return { kind: 'datetime', year, month, day, hour, minute, second, microsecond };
}

function toDate(dt: MysqlDateTime): MysqlDate {
  return { kind: 'date', year: dt.year, month: dt.month, day: dt.day };
}

function readTime(r: PacketReader): MysqlTime {
  const length = r.u8('time length');
  if (length === 0) return { kind: 'time', negative: false, days: 0, hours: 0, minutes: 0, seconds: 0, microseconds: 0 };
  if (length !== 8 && length !== 12) throw MalformedPacket(`time length ${length}`);
  const negative = r.u8() === 1;
  const days = r.u32();
  const hours = r.u8();
  const minutes = r.u8();
  const seconds = r.u8();
  const microseconds = length === 12 ? r.u32() : 0;
  return { kind: 'time', negative, days, hours, minutes, seconds, microseconds };
}

/** Writes one non-NULL value in the binary encoding of `type`. */
export function writeBinaryValue(w: PacketWriter, type: number, unsigned: boolean, value: MysqlValue): void {
  if (value === null) throw InvalidValue('NULL goes in the NULL bitmap, not in the values');
  switch (type) {
    case ColumnType.Null:
      return;
    case ColumnType.Tiny:
      return void (unsigned ? w.u8(intIn(value, 0, 0xff)) : w.i8(intIn(value, -0x80, 0x7f)));
    case ColumnType.Short:
    case ColumnType.Year:
      return void (unsigned || type === ColumnType.Year ? w.u16(intIn(value, 0, 0xffff)) : w.i16(intIn(value, -0x8000, 0x7fff)));
    case ColumnType.Long:
    case ColumnType.Int24:
      return void (unsigned ? w.u32(intIn(value, 0, 0xffffffff)) : w.i32(intIn(value, -0x80000000, 0x7fffffff)));
    case ColumnType.LongLong:
      return void writeLongLong(w, unsigned, value);
    case ColumnType.Float:
      return void w.f32(numberOf(value));
    case ColumnType.Double:
      return void w.f64(numberOf(value));
    case ColumnType.Date:
    case ColumnType.NewDate:
    case ColumnType.DateTime:
    case ColumnType.Timestamp:
      return writeDateTime(w, type, value);
    case ColumnType.Time:
      return writeTime(w, value);
    default:
      return writeByteString(w, type, value);
  }
}

function intIn(value: MysqlValue, min: number, max: number): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw InvalidValue(`${String(value)} is not an integer in [${min}, ${max}]`);
  return n;
}

function writeLongLong(w: PacketWriter, unsigned: boolean, value: MysqlValue): void {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  else if (typeof value === 'string' && /^-?\d+$/.test(value)) n = BigInt(value);
  else throw InvalidValue(`${String(value)} is not a 64-bit integer`);
  const [min, max] = unsigned ? [0n, 0xffffffffffffffffn] : [-(2n ** 63n), 2n ** 63n - 1n];
  if (n < min || n > max) throw InvalidValue(`${n} is out of range for ${unsigned ? 'unsigned ' : ''}BIGINT`);
  if (unsigned) w.u64(n);
  else w.i64(n);
}

function numberOf(value: MysqlValue): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  throw InvalidValue(`${describe(value)} is not a number`);
}

function writeDateTime(w: PacketWriter, type: number, value: MysqlValue): void {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || value.kind === 'time') {
    throw InvalidValue(`${describe(value)} is not a date or datetime`);
  }
  const dt: MysqlDateTime = value.kind === 'date' ? { ...value, kind: 'datetime', hour: 0, minute: 0, second: 0, microsecond: 0 } : value;
  checkFields(dt.kind, [dt.year, 9999], [dt.month, 12], [dt.day, 31], [dt.hour, 23], [dt.minute, 59], [dt.second, 59], [dt.microsecond, 999999]);
  const dateOnly = type === ColumnType.Date || type === ColumnType.NewDate;
  const length = dt.microsecond !== 0 && !dateOnly ? 11 : (dt.hour | dt.minute | dt.second) !== 0 && !dateOnly ? 7 : (dt.year | dt.month | dt.day) !== 0 ? 4 : 0;
  w.u8(length);
  if (length >= 4) w.u16(dt.year).u8(dt.month).u8(dt.day);
  if (length >= 7) w.u8(dt.hour).u8(dt.minute).u8(dt.second);
  if (length === 11) w.u32(dt.microsecond);
}

function writeTime(w: PacketWriter, value: MysqlValue): void {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || value.kind !== 'time') throw InvalidValue(`${describe(value)} is not a time`);
  checkFields('time', [value.days, 0xffffffff], [value.hours, 23], [value.minutes, 59], [value.seconds, 59], [value.microseconds, 999999]);
  const zero = (value.days | value.hours | value.minutes | value.seconds | value.microseconds) === 0;
  if (zero) return void w.u8(0);
  const length = value.microseconds !== 0 ? 12 : 8;
  w.u8(length).u8(value.negative ? 1 : 0).u32(value.days).u8(value.hours).u8(value.minutes).u8(value.seconds);
  if (length === 12) w.u32(value.microseconds);
}

function checkFields(kind: string, ...fields: [number, number][]): void {
  for (const [v, max] of fields) {
    if (!Number.isInteger(v) || v < 0 || v > max) throw InvalidValue(`${kind} field ${v} is not an integer in [0, ${max}]`);
  }
}

function writeByteString(w: PacketWriter, type: number, value: MysqlValue): void {
  if (!isLengthEncodedType(type)) throw UnsupportedType(type);
  if (typeof value === 'string') return void w.lenencString(value);
  if (Buffer.isBuffer(value)) return void w.lenencBytes(value);
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return void w.lenencString(String(value));
  throw InvalidValue(`${describe(value)} cannot be sent as type ${type}`);
}

function describe(value: MysqlValue): string {
  if (value === null) return 'NULL';
  if (Buffer.isBuffer(value)) return `Buffer(${value.length})`;
  if (typeof value === 'object') return value.kind;
  return `${typeof value} ${String(value)}`;
}

/** A parameter's wire type chosen from its JS value (how a client with no type hints binds it). */
export function inferParameterType(value: MysqlValue): { type: number; unsigned: boolean } {
  if (value === null) return { type: ColumnType.Null, unsigned: false };
  if (typeof value === 'number') return { type: Number.isSafeInteger(value) ? ColumnType.LongLong : ColumnType.Double, unsigned: false };
  if (typeof value === 'bigint') return { type: ColumnType.LongLong, unsigned: value > 2n ** 63n - 1n };
  if (typeof value === 'string') return { type: ColumnType.VarString, unsigned: false };
  if (Buffer.isBuffer(value)) return { type: ColumnType.Blob, unsigned: false };
  if (value.kind === 'date') return { type: ColumnType.Date, unsigned: false };
  if (value.kind === 'datetime') return { type: ColumnType.DateTime, unsigned: false };
  return { type: ColumnType.Time, unsigned: false };
}
