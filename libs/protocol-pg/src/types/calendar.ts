// PostgreSQL's proleptic Gregorian calendar: Julian day numbers, ISO text, and the valid ranges.

/** Julian day of 2000-01-01, the epoch of binary dates and timestamps. */
export const POSTGRES_EPOCH_JDATE = 2451545;
export const MICROS_PER_DAY = 86_400_000_000n;
/** Days since 2000-01-01 that dates may take: 4713-11-24 BC up to (not including) 5874898-01-01. */
export const MIN_DATE_DAYS = -POSTGRES_EPOCH_JDATE;
export const END_DATE_DAYS = 2147483494 - POSTGRES_EPOCH_JDATE;
/** Microseconds since 2000-01-01 that timestamps may take: 4714-11-24 BC up to (not including) 294277-01-01. */
export const MIN_TIMESTAMP = -211813488000000000n;
export const END_TIMESTAMP = 9223371331200000000n;
/** The binary encodings of -infinity/infinity. */
export const DATE_NOBEGIN = -0x80000000;
export const DATE_NOEND = 0x7fffffff;
export const TIMESTAMP_NOBEGIN = -(2n ** 63n);
export const TIMESTAMP_NOEND = 2n ** 63n - 1n;

const div = (a: number, b: number): number => Math.trunc(a / b);

/** Julian day of an astronomical year (1 BC is 0), month and day; PostgreSQL's date2j. */
export function dateToJulian(year: number, month: number, day: number): number {
  let y = year;
  let m = month;
  if (m > 2) {
    m += 1;
    y += 4800;
  } else {
    m += 13;
    y += 4799;
  }
  const century = div(y, 100);
  return y * 365 - 32167 + div(y, 4) - century + div(century, 4) + div(7834 * m, 256) + day;
}

/** PostgreSQL's j2date, for non-negative Julian days. */
export function julianToDate(jd: number): { year: number; month: number; day: number } {
  let julian = jd + 32044;
  let quad = div(julian, 146097);
  const extra = (julian - quad * 146097) * 4 + 3;
  julian += 60 + quad * 3 + div(extra, 146097);
  quad = div(julian, 1461);
  julian -= quad * 1461;
  let y = div(julian * 4, 1461);
  julian = (y !== 0 ? (julian + 305) % 365 : (julian + 306) % 366) + 123;
  y += quad * 4;
  const q = div(julian * 2141, 65536);
  return { year: y - 4800, month: ((q + 10) % 12) + 1, day: julian - div(7834 * q, 256) };
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** `YYYY-MM-DD` with the BC suffix handled by the caller; the year is the displayed (not astronomical) one. */
export function formatIsoDate(jd: number): { text: string; bc: boolean } {
  const { year, month, day } = julianToDate(jd);
  const bc = year <= 0;
  return { text: `${pad(bc ? 1 - year : year, 4)}-${pad(month, 2)}-${pad(day, 2)}`, bc };
}

/** `HH:MM:SS` plus up to six fractional digits, trailing zeros dropped (the server's AppendSeconds). */
export function formatTimeOfDay(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = micros % 1_000_000;
  const hms = `${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`;
  return fraction === 0 ? hms : `${hms}.${pad(fraction, 6).replace(/0+$/, '')}`;
}

/** A UTC offset in seconds as the server prints it: `+HH`, `+HH:MM` or `+HH:MM:SS`. */
export function formatOffset(offsetSeconds: number): string {
  const abs = Math.abs(offsetSeconds);
  let text = `${offsetSeconds < 0 ? '-' : '+'}${pad(Math.floor(abs / 3600), 2)}`;
  const minutes = Math.floor(abs / 60) % 60;
  const seconds = abs % 60;
  if (minutes !== 0 || seconds !== 0) text += `:${pad(minutes, 2)}`;
  if (seconds !== 0) text += `:${pad(seconds, 2)}`;
  return text;
}
