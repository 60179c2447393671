// Statements routed before, recognised again by their text without the tokenizer: a repeated query
// that differs from an earlier one only in its plain integer and simple string literals (the same
// shape, as `SELECT abalance FROM pgbench_accounts WHERE aid = 4711;` is to `... aid = 17;`) has the
// same fingerprint, so its route is the earlier one's wherever the route does not depend on literal
// values. SqlRouter keeps only such routes here (no shard key read from a literal, no SET autocommit
// variant, no comments, which carry hints and trace context).
import { Buffer } from 'node:buffer';
import type { StatementScan } from './statement-scan';

/** How many characters key a shape: statements with a variable literal before them are not kept. */
export const SHAPE_KEY_LENGTH = 16;
/** Longer statements are not kept: 1,024 shapes hold at most a few MiB of text. */
export const SHAPE_MAX_LENGTH = 2048;
/** Shapes kept per key (statements that start alike); a further one replaces the oldest. */
const SHAPES_PER_KEY = 4;

/** Variable parts of a shape: `kind` DIGITS (an unsigned integer) or QUOTED ('...' without quotes or backslashes inside). */
const DIGITS = 1;
const QUOTED = 2;

interface Shape<R> {
  /** The earlier statement's text. */
  readonly text: string;
  /** Per variable literal: start, end (in `text`) and kind, flattened. */
  readonly literals: Int32Array;
  /** For matching bytes: `text` with each variable literal's value replaced by an ASCII one, when the rest of it is ASCII. */
  readonly bytes: Buffer | undefined;
  /** `literals` in `bytes`. */
  readonly byteLiterals: Int32Array;
  readonly route: R;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * What may follow a variable literal for the tokenizer to end it there in any statement whose text
 * agrees elsewhere: white space, `,` `;` `)` or the end (not a letter, digit, `.`, `_`, `$` or quote,
 * which could make a longer or another token).
 */
const endsLiteral = (c: number): boolean => Number.isNaN(c) || c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === 0x2c || c === 0x3b || c === 0x29;

/**
 * The variable literals of a scanned statement (start, end, kind); undefined when it has none, or one that
 * starts within the first SHAPE_KEY_LENGTH characters or is followed by a character that might not end it.
 */
function variableLiterals(scan: StatementScan, text: string): Int32Array | undefined {
  const found: number[] = [];
  for (let i = 0; i < scan.rawStart.length; i++) {
    const start = scan.rawStart.data[i] as number;
    const end = scan.rawEnd.data[i] as number;
    const kind = literalKind(text, start, end);
    if (kind === 0) continue; // kept as fixed text: a statement of this shape must have it verbatim
    if (start < SHAPE_KEY_LENGTH || !endsLiteral(text.charCodeAt(end))) return undefined;
    found.push(start, end, kind);
  }
  return found.length === 0 ? undefined : Int32Array.from(found);
}

function literalKind(text: string, start: number, end: number): number {
  if (end <= start) return 0;
  let digits = true;
  for (let i = start; i < end && digits; i++) digits = isDigit(text.charCodeAt(i));
  if (digits) return DIGITS;
  if (end - start < 2 || text.charCodeAt(start) !== 0x27 || text.charCodeAt(end - 1) !== 0x27) return 0;
  for (let i = start + 1; i < end - 1; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x27 || c === 0x5c) return 0;
  }
  return QUOTED;
}

/** Whether `a[from, to)` equals `b` from `at`. */
function sameRun(a: string, from: number, to: number, b: string, at: number): boolean {
  if (at + (to - from) > b.length) return false;
  for (let i = from; i < to; i++) if (a.charCodeAt(i) !== b.charCodeAt(at + i - from)) return false;
  return true;
}

/** Where the variable literal of `kind` that starts at `at` in `text` ends, or -1 when there is none of that kind. */
function literalEnd(text: string, at: number, kind: number): number {
  let i = at;
  if (kind === DIGITS) {
    while (isDigit(text.charCodeAt(i))) i++;
    return i > at ? i : -1;
  }
  if (text.charCodeAt(i) !== 0x27) return -1;
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) return -1;
    if (c === 0x27) return text.charCodeAt(i + 1) === 0x27 ? -1 : i + 1;
  }
  return -1;
}

/** Whether `text` is `shape` with other values in its variable literals (and the same everything else). */
function matches<R>(shape: Shape<R>, text: string): boolean {
  const earlier = shape.text;
  const literals = shape.literals;
  let from = 0; // in the earlier text
  let at = 0; // in this one
  for (let i = 0; i < literals.length; i += 3) {
    const start = literals[i] as number;
    if (!sameRun(earlier, from, start, text, at)) return false;
    at += start - from;
    const end = literalEnd(text, at, literals[i + 2] as number);
    if (end < 0 || !endsLiteral(text.charCodeAt(end))) return false;
    at = end;
    from = literals[i + 1] as number;
  }
  return earlier.length - from === text.length - at && sameRun(earlier, from, earlier.length, text, at);
}

/** Whether `a[from, to)` equals `b` from `at` (`b` ends at `stop`). */
function sameBytes(a: Buffer, from: number, to: number, b: Buffer, at: number, stop: number): boolean {
  if (at + (to - from) > stop) return false;
  for (let i = from; i < to; i++) if (a[i] !== b[at + i - from]) return false;
  return true;
}

/** endsLiteral for bytes: the end of the text ends a literal too. */
const endsLiteralAt = (b: Buffer, at: number, stop: number): boolean => at >= stop || endsLiteral(b[at] as number);

/** literalEnd over bytes `b[at, stop)`: a multi-byte UTF-8 character holds no quote or backslash byte, so a quoted literal ends where its characters' would. */
function literalEndBytes(b: Buffer, at: number, stop: number, kind: number): number {
  let i = at;
  if (kind === DIGITS) {
    while (i < stop && isDigit(b[i] as number)) i++;
    return i > at ? i : -1;
  }
  if (i >= stop || b[i] !== 0x27) return -1;
  for (i++; i < stop; i++) {
    const c = b[i] as number;
    if (c === 0x5c) return -1;
    if (c === 0x27) return i + 1 < stop && b[i + 1] === 0x27 ? -1 : i + 1;
  }
  return -1;
}

/**
 * `matches` over the UTF-8 bytes `b[begin, stop)` of a statement, for a shape whose text is ASCII:
 * its fixed parts are then the same bytes as characters, and every other byte lies in a literal.
 */
function matchesBytes<R>(shape: Shape<R>, earlier: Buffer, b: Buffer, begin: number, stop: number): boolean {
  const literals = shape.byteLiterals;
  let from = 0;
  let at = begin;
  for (let i = 0; i < literals.length; i += 3) {
    const start = literals[i] as number;
    if (!sameBytes(earlier, from, start, b, at, stop)) return false;
    at += start - from;
    const end = literalEndBytes(b, at, stop, literals[i + 2] as number);
    if (end < 0 || !endsLiteralAt(b, end, stop)) return false;
    at = end;
    from = literals[i + 1] as number;
  }
  return earlier.length - from === stop - at && sameBytes(earlier, from, earlier.length, b, at, stop);
}

const ASCII_VALUE = [0, '0', "''"] as const;

/**
 * `text` for matching bytes: its fixed parts as they are (they must be ASCII, else undefined), each
 * variable literal an ASCII value of its kind; with the literals' places in it.
 */
function asciiShape(text: string, literals: Int32Array): { bytes: Buffer; byteLiterals: Int32Array } | undefined {
  let ascii = '';
  const byteLiterals = new Int32Array(literals.length);
  let from = 0;
  for (let i = 0; i <= literals.length; i += 3) {
    const to = i < literals.length ? (literals[i] as number) : text.length;
    for (let j = from; j < to; j++) if (text.charCodeAt(j) > 0x7f) return undefined;
    ascii += text.slice(from, to);
    if (i === literals.length) break;
    const kind = literals[i + 2] as 1 | 2;
    byteLiterals[i] = ascii.length;
    ascii += ASCII_VALUE[kind];
    byteLiterals[i + 1] = ascii.length;
    byteLiterals[i + 2] = kind;
    from = literals[i + 1] as number;
  }
  return { bytes: Buffer.from(ascii, 'latin1'), byteLiterals };
}

/** Routes by shape, at most `capacity` shapes (all forgotten when full: a workload of that many shapes gains nothing here). */
export class ShapeMemo<R> {
  private readonly byKey = new Map<string, Shape<R>[]>();
  private size = 0;
  /** The shape found or kept last, tried before the map: a busy shape repeats, and trying it costs no key string or hash. */
  private last: Shape<R> | undefined;
  hits = 0;

  constructor(private readonly capacity: number) {}

  /** The route of an earlier statement of the same shape, or undefined. */
  find(text: string): R | undefined {
    if (text.length <= SHAPE_KEY_LENGTH || text.length > SHAPE_MAX_LENGTH) return undefined;
    const last = this.last;
    if (last !== undefined && matches(last, text)) {
      this.hits++;
      return last.route;
    }
    const shapes = this.byKey.get(text.slice(0, SHAPE_KEY_LENGTH));
    if (shapes === undefined) return undefined;
    for (const shape of shapes) {
      if (matches(shape, text)) {
        this.hits++;
        this.last = shape;
        return shape.route;
      }
    }
    return undefined;
  }

  /**
   * `find` for a statement given as its UTF-8 bytes `b[start, end)`, without decoding them: only
   * shapes of ASCII text are found this way (undefined may still be found by `find` on the text).
   */
  findBytes(b: Buffer, start: number, end: number): R | undefined {
    const length = end - start;
    if (length <= SHAPE_KEY_LENGTH || length > SHAPE_MAX_LENGTH) return undefined;
    const last = this.last;
    if (last !== undefined && last.bytes !== undefined && matchesBytes(last, last.bytes, b, start, end)) {
      this.hits++;
      return last.route;
    }
    for (let i = start; i < start + SHAPE_KEY_LENGTH; i++) if ((b[i] as number) > 0x7f) return undefined;
    const shapes = this.byKey.get(b.toString('latin1', start, start + SHAPE_KEY_LENGTH));
    if (shapes === undefined) return undefined;
    for (const shape of shapes) {
      if (shape.bytes !== undefined && matchesBytes(shape, shape.bytes, b, start, end)) {
        this.hits++;
        this.last = shape;
        return shape.route;
      }
    }
    return undefined;
  }

  /** Keeps `route` for statements of `text`'s shape (`scan`: its scan, just run); a statement without variable literals is not kept. */
  remember(text: string, scan: StatementScan, route: R): void {
    if (text.length > SHAPE_MAX_LENGTH) return;
    const literals = variableLiterals(scan, text);
    if (literals === undefined) return;
    if (this.size >= this.capacity) {
      this.byKey.clear();
      this.size = 0;
    }
    this.last = undefined;
    const key = text.slice(0, SHAPE_KEY_LENGTH);
    const shapes = this.byKey.get(key);
    const ascii = asciiShape(text, literals);
    const shape = { text, literals, bytes: ascii?.bytes, byteLiterals: ascii?.byteLiterals ?? literals, route };
    if (shapes !== undefined && shapes.length >= SHAPES_PER_KEY) {
      shapes.copyWithin(0, 1);
      shapes[shapes.length - 1] = shape;
      return;
    }
    if (shapes === undefined) this.byKey.set(key, [shape]);
    else shapes.push(shape);
    this.size++;
  }
}
