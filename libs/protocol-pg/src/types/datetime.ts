// date, time, timestamp, timestamptz: ISO text (DateStyle ISO) <-> binary days/microseconds since 2000-01-01.
import { Buffer } from 'node:buffer';
import { ValueInvalid, ValueOutOfRange } from '../errors';
import { expectLength, toUtf8, type TypeCodec, utf8 } from './codec';
import * as cal from './calendar';
import { PgTypeOid } from './oids';

const isString = (value: unknown): value is string => typeof value === 'string';
const MAX_OFFSET_SECONDS = 15 * 3600 + 59 * 60 + 59;
const DAY_MICROS = 86_400_000_000;

const DATE = String.raw`(\d{4,})-(\d{1,2})-(\d{1,2})`;
const TIME = String.raw`(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?`;
const OFFSET = String.raw`(Z|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)`;
const DATE_RE = new RegExp(`^${DATE}(\\s+BC)?$`, 'i');
const TIME_RE = new RegExp(`^${TIME}$`);
const TIMESTAMP_RE = new RegExp(`^${DATE}[T ]${TIME}\\s*${OFFSET}?(\\s+BC)?$`, 'i');

type Special = 'infinity' | '-infinity';

function special(text: string): Special | undefined {
  const s = text.toLowerCase();
  if (s === 'infinity' || s === '+infinity') return 'infinity';
  return s === '-infinity' ? '-infinity' : undefined;
}

/** Julian day of an ISO date whose year may carry BC; validates month and day. */
function julianOf(type: string, y: string, m: string, d: string, bc: boolean): number {
  const year = bc ? 1 - Number(y) : Number(y);
  const month = Number(m);
  const day = Number(d);
  if (Number(y) === 0 || month < 1 || month > 12 || day < 1 || day > cal.daysInMonth(year, month)) {
    throw ValueOutOfRange(type, `date ${y}-${m}-${d}${bc ? ' BC' : ''}`);
  }
  return cal.dateToJulian(year, month, day);
}

/** Microseconds since midnight; 24:00:00 is allowed, as in the server. */
function timeOfDay(type: string, h: string, m: string, s = '0', fraction = ''): number {
  const micros = ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1_000_000 + Number(fraction.padEnd(6, '0'));
  if (Number(m) > 59 || Number(s) > 59 || micros > DAY_MICROS) throw ValueOutOfRange(type, `time ${h}:${m}:${s}`);
  return micros;
}

function offsetSeconds(text: string): number {
  if (text.toUpperCase() === 'Z') return 0;
  const digits = text.slice(1).replace(/:/g, '');
  const hours = digits.length % 2 === 1 ? digits.slice(0, 1) : digits.slice(0, 2);
  const rest = digits.slice(hours.length);
  const seconds = Number(hours) * 3600 + Number(rest.slice(0, 2) || '0') * 60 + Number(rest.slice(2, 4) || '0');
  if (seconds > MAX_OFFSET_SECONDS || Number(rest.slice(0, 2) || '0') > 59) throw ValueOutOfRange('timestamptz', `offset ${text}`);
  return text[0] === '-' ? -seconds : seconds;
}

function parseDate(bytes: Buffer): number {
  const text = utf8(bytes, 'date').trim();
  const inf = special(text);
  if (inf) return inf === 'infinity' ? cal.DATE_NOEND : cal.DATE_NOBEGIN;
  const match = DATE_RE.exec(text);
  if (!match) throw ValueInvalid('date', 'text', `${JSON.stringify(text.slice(0, 40))} is not an ISO date`);
  return checkDays(julianOf('date', match[1], match[2], match[3], match[4] !== undefined) - cal.POSTGRES_EPOCH_JDATE);
}

function checkDays(days: number): number {
  if (days === cal.DATE_NOBEGIN || days === cal.DATE_NOEND) return days;
  if (days < cal.MIN_DATE_DAYS || days >= cal.END_DATE_DAYS) throw ValueOutOfRange('date', `${days} days from 2000-01-01`);
  return days;
}

function formatDate(days: number): string {
  if (days === cal.DATE_NOBEGIN) return '-infinity';
  if (days === cal.DATE_NOEND) return 'infinity';
  const { text, bc } = cal.formatIsoDate(checkDays(days) + cal.POSTGRES_EPOCH_JDATE);
  return bc ? `${text} BC` : text;
}

export const dateCodec: TypeCodec<string> = {
  name: 'date',
  oid: PgTypeOid.date,
  accepts: 'an ISO date string',
  is: isString,
  decodeText: (bytes) => formatDate(parseDate(bytes)),
  encodeText: (value) => toUtf8(formatDate(parseDate(Buffer.from(value))), 'date'),
  decodeBinary(bytes) {
    expectLength(bytes, 4, 'date');
    return formatDate(bytes.readInt32BE(0));
  },
  encodeBinary(value) {
    const out = Buffer.allocUnsafe(4);
    out.writeInt32BE(parseDate(Buffer.from(value)));
    return out;
  },
};

function parseTime(bytes: Buffer): number {
  const text = utf8(bytes, 'time').trim();
  const match = TIME_RE.exec(text);
  if (!match) throw ValueInvalid('time', 'text', `${JSON.stringify(text.slice(0, 40))} is not an ISO time`);
  return timeOfDay('time', match[1], match[2], match[3], match[4]);
}

export const timeCodec: TypeCodec<string> = {
  name: 'time',
  oid: PgTypeOid.time,
  accepts: 'an ISO time string',
  is: isString,
  decodeText: (bytes) => cal.formatTimeOfDay(parseTime(bytes)),
  encodeText: (value) => toUtf8(cal.formatTimeOfDay(parseTime(Buffer.from(value))), 'time'),
  decodeBinary(bytes) {
    expectLength(bytes, 8, 'time');
    const micros = bytes.readBigInt64BE(0);
    if (micros < 0n || micros > BigInt(DAY_MICROS)) throw ValueOutOfRange('time', `${micros} microseconds`);
    return cal.formatTimeOfDay(Number(micros));
  },
  encodeBinary(value) {
    const out = Buffer.allocUnsafe(8);
    out.writeBigInt64BE(BigInt(parseTime(Buffer.from(value))));
    return out;
  },
};

/** Microseconds since 2000-01-01 (UTC for timestamptz). Without a zone, timestamptz text is refused: the session zone is unknown here. */
function parseTimestamp(type: 'timestamp' | 'timestamptz', bytes: Buffer): bigint {
  const text = utf8(bytes, type).trim();
  const inf = special(text);
  if (inf) return inf === 'infinity' ? cal.TIMESTAMP_NOEND : cal.TIMESTAMP_NOBEGIN;
  const m = TIMESTAMP_RE.exec(text);
  if (!m) throw ValueInvalid(type, 'text', `${JSON.stringify(text.slice(0, 40))} is not an ISO timestamp`);
  if (type === 'timestamptz' && m[8] === undefined) throw ValueInvalid(type, 'text', 'a UTC offset is required');
  const days = julianOf(type, m[1], m[2], m[3], m[9] !== undefined) - cal.POSTGRES_EPOCH_JDATE;
  const local = BigInt(days) * cal.MICROS_PER_DAY + BigInt(timeOfDay(type, m[4], m[5], m[6], m[7]));
  // timestamp without time zone ignores a zone in its input, like the server.
  const offset = type === 'timestamptz' ? BigInt(offsetSeconds(m[8])) * 1_000_000n : 0n;
  return checkMicros(type, local - offset);
}

function checkMicros(type: string, micros: bigint): bigint {
  if (micros === cal.TIMESTAMP_NOBEGIN || micros === cal.TIMESTAMP_NOEND) return micros;
  if (micros < cal.MIN_TIMESTAMP || micros >= cal.END_TIMESTAMP) throw ValueOutOfRange(type, `${micros} microseconds from 2000-01-01`);
  return micros;
}

function formatTimestamp(type: 'timestamp' | 'timestamptz', micros: bigint): string {
  if (micros === cal.TIMESTAMP_NOBEGIN) return '-infinity';
  if (micros === cal.TIMESTAMP_NOEND) return 'infinity';
  checkMicros(type, micros);
  let days = micros / cal.MICROS_PER_DAY;
  if (micros % cal.MICROS_PER_DAY < 0n) days -= 1n;
  const time = Number(micros - days * cal.MICROS_PER_DAY);
  const { text, bc } = cal.formatIsoDate(Number(days) + cal.POSTGRES_EPOCH_JDATE);
  return `${text} ${cal.formatTimeOfDay(time)}${type === 'timestamptz' ? '+00' : ''}${bc ? ' BC' : ''}`;
}

function makeTimestampCodec(type: 'timestamp' | 'timestamptz', oid: number): TypeCodec<string> {
  return {
    name: type,
    oid,
    accepts: `an ISO ${type} string`,
    is: isString,
    decodeText: (bytes) => formatTimestamp(type, parseTimestamp(type, bytes)),
    encodeText: (value) => toUtf8(formatTimestamp(type, parseTimestamp(type, Buffer.from(value))), type),
    decodeBinary(bytes) {
      expectLength(bytes, 8, type);
      return formatTimestamp(type, bytes.readBigInt64BE(0));
    },
    encodeBinary(value) {
      const out = Buffer.allocUnsafe(8);
      out.writeBigInt64BE(parseTimestamp(type, Buffer.from(value)));
      return out;
    },
  };
}

export const timestampCodec = makeTimestampCodec('timestamp', PgTypeOid.timestamp);
export const timestamptzCodec = makeTimestampCodec('timestamptz', PgTypeOid.timestamptz);
