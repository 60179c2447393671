// The one-line reply types (`+ - : _ # , (`): what their text may contain.
import { Ascii, RespType } from './wire';

/** Checks the text of a one-line reply, [from, to) between the type byte and CR, for its type. */
export function validLine(type: number, buf: Buffer, from: number, to: number): boolean {
  const length = to - from;
  switch (type) {
    case RespType.Integer:
    case RespType.BigNumber: {
      if (from < to && buf[from] === Ascii.Minus) from++;
      if (from === to || (type === RespType.Integer && length > 20)) return false;
      for (let p = from; p < to; p++) if (buf[p] < Ascii.Zero || buf[p] > Ascii.Nine) return false;
      return true;
    }
    case RespType.Null:
      return length === 0;
    case RespType.Boolean:
      return length === 1 && (buf[from] === Ascii.LowerT || buf[from] === Ascii.LowerF);
    case RespType.Double:
      return length > 0;
    default:
      return true;
  }
}

/** Names used in "bad <type> line" errors. */
export const LINE_NAMES: Readonly<Record<number, string>> = {
  [RespType.Integer]: 'integer',
  [RespType.BigNumber]: 'big number',
  [RespType.Null]: 'null',
  [RespType.Boolean]: 'boolean',
  [RespType.Double]: 'double',
  [RespType.SimpleString]: 'simple string',
  [RespType.Error]: 'error',
  [RespType.Verbatim]: 'verbatim',
};

/** A RESP3 double's text as a number (`inf`, `-inf`, `nan` or decimal/exponent form), undefined when malformed. */
export function parseDouble(text: string): number | undefined {
  switch (text) {
    case 'inf':
    case '+inf':
      return Infinity;
    case '-inf':
      return -Infinity;
    case 'nan':
    case '-nan':
      return NaN;
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const digit = c >= Ascii.Zero && c <= Ascii.Nine;
    if (!digit && c !== Ascii.Dot && c !== Ascii.Plus && c !== Ascii.Minus && (c | 0x20) !== 0x65) return undefined;
  }
  const value = Number(text);
  return Number.isNaN(value) ? undefined : value;
}
