// Text-protocol cells (COM_QUERY result rows) to and from typed JS values.
import { Buffer } from 'node:buffer';
import { ColumnType, isAlwaysBinaryType, type MysqlDate, type MysqlDateTime, type MysqlTime, type MysqlValue } from './column-types';
import { MalformedPacket } from './errors';

/** How to read one text cell: its column type and whether the column holds bytes. */
export interface TextValueSpec {
  readonly type: number;
  readonly binary: boolean;
  readonly encoding?: BufferEncoding;
}

const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?$/;
const TIME_RE = /^(-)?(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;
const INTEGER_RE = /^-?\d+$/;

/** Converts one non-NULL text cell to a typed value. */
export function parseTextValue(cell: Buffer, spec: TextValueSpec): MysqlValue {
  switch (spec.type) {
    case ColumnType.Tiny:
    case ColumnType.Short:
    case ColumnType.Long:
    case ColumnType.Int24:
    case ColumnType.Year:
      return Number(integerText(cell));
    case ColumnType.LongLong:
      return BigInt(integerText(cell));
    case ColumnType.Float:
    case ColumnType.Double:
      return floatText(cell);
    case ColumnType.Decimal:
    case ColumnType.NewDecimal:
      return cell.toString('latin1');
    case ColumnType.Date:
    case ColumnType.NewDate:
      return toDate(parseDateTime(cell.toString('latin1')));
    case ColumnType.DateTime:
    case ColumnType.Timestamp:
      return parseDateTime(cell.toString('latin1'));
    case ColumnType.Time:
      return parseTime(cell.toString('latin1'));
    default:
      return spec.binary || isAlwaysBinaryType(spec.type) ? cell : cell.toString(spec.encoding ?? 'utf8');
  }
}

function integerText(cell: Buffer): string {
  const text = cell.toString('latin1');
  if (!INTEGER_RE.test(text)) throw MalformedPacket(`integer cell ${JSON.stringify(text.slice(0, 32))}`);
  return text;
}

function floatText(cell: Buffer): number {
  const text = cell.toString('latin1');
  const n = Number(text);
  if (text.trim() === '' || Number.isNaN(n)) throw MalformedPacket(`float cell ${JSON.stringify(text.slice(0, 32))}`);
  return n;
}

function micros(fraction: string | undefined): number {
  return fraction ? Number(fraction.padEnd(6, '0')) : 0;
}

/** Parses `YYYY-MM-DD[ HH:MM:SS[.ffffff]]`. */
export function parseDateTime(text: string): MysqlDateTime {
  const m = DATETIME_RE.exec(text);
  if (!m) throw MalformedPacket(`datetime ${JSON.stringify(text.slice(0, 32))}`);
  return {
    kind: 'datetime',
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    microsecond: micros(m[7]),
  };
}

function toDate(dt: MysqlDateTime): MysqlDate {
  return { kind: 'date', year: dt.year, month: dt.month, day: dt.day };
}

/** Parses `[-]H+:MM:SS[.ffffff]` (hours may exceed 24; they are split into days). */
export function parseTime(text: string): MysqlTime {
  const m = TIME_RE.exec(text);
  if (!m) throw MalformedPacket(`time ${JSON.stringify(text.slice(0, 32))}`);
  const totalHours = Number(m[2]);
  return {
    kind: 'time',
    negative: m[1] === '-',
    days: Math.floor(totalHours / 24),
    hours: totalHours % 24,
    minutes: Number(m[3]),
    seconds: Number(m[4]),
    microseconds: micros(m[5]),
  };
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

function fraction(us: number): string {
  return us === 0 ? '' : `.${pad(us, 6)}`;
}

/** Formats a typed value as the text protocol does; Buffers stay bytes. */
export function formatTextValue(value: Exclude<MysqlValue, null>): string | Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value !== 'object') return String(value);
  switch (value.kind) {
    case 'date':
      return `${pad(value.year, 4)}-${pad(value.month, 2)}-${pad(value.day, 2)}`;
    case 'datetime':
      return `${pad(value.year, 4)}-${pad(value.month, 2)}-${pad(value.day, 2)} ${pad(value.hour, 2)}:${pad(value.minute, 2)}:${pad(value.second, 2)}${fraction(value.microsecond)}`;
    case 'time': {
      const hours = value.days * 24 + value.hours;
      return `${value.negative ? '-' : ''}${pad(hours, 2)}:${pad(value.minutes, 2)}:${pad(value.seconds, 2)}${fraction(value.microseconds)}`;
    }
  }
}
