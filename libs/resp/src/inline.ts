// Splitting an inline command line into arguments with Redis's sdssplitargs quoting rules.
import { Buffer } from 'node:buffer';
import type { CommandBatch } from './command-batch';
import { UnbalancedQuotes } from './errors';
import { Ascii } from './wire';

/** C isspace(): the blanks skipped between arguments and accepted after a closing quote. */
function isSpace(c: number): boolean {
  return c === Ascii.Space || (c >= Ascii.Tab && c <= Ascii.CR);
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function unescape(c: number): number {
  switch (c) {
    case 0x6e: return Ascii.LF; // 'n'
    case 0x72: return Ascii.CR; // 'r'
    case 0x74: return Ascii.Tab; // 't'
    case 0x62: return 0x08; // 'b'
    case 0x61: return 0x07; // 'a'
    default: return c;
  }
}

/**
 * Splits inline lines. Arguments that are plain runs of the line's bytes (unquoted, or one
 * quoted part with no escapes) are recorded as views of the input; a line with any escape
 * or mid-token quote is unescaped into a new Buffer the batch keeps for that command.
 */
export class InlineSplitter {
  private scratch = Buffer.alloc(0);
  private sourceStarts = new Int32Array(16);
  private buf: Buffer = this.scratch;
  private end = 0;
  private out = 0;
  private simple = true;
  private srcStart = 0;

  /** Records the arguments of line [start, end) in `batch`; returns the unescaped buffer, if one was needed. */
  split(buf: Buffer, start: number, end: number, batch: CommandBatch): Buffer | undefined {
    if (this.scratch.length < end - start) this.scratch = Buffer.allocUnsafe(Math.max(end - start, 1024));
    this.buf = buf;
    this.end = end;
    this.out = 0;
    const first = batch.argTotal;
    let allSimple = true;
    let p = start;
    for (;;) {
      while (p < end && isSpace(buf[p])) p++;
      if (p >= end || buf[p] === Ascii.Nul) break;
      const outStart = this.out;
      p = this.token(p);
      allSimple &&= this.simple;
      this.noteSource(batch.argTotal - first, this.srcStart);
      batch.pushArg(outStart, this.out - outStart);
    }
    if (allSimple) {
      for (let j = first; j < batch.argTotal; j++) batch.argOffset[j] = this.sourceStarts[j - first];
      return undefined;
    }
    return Buffer.from(this.scratch.subarray(0, this.out));
  }

  private at(p: number): number {
    return p < this.end ? this.buf[p] : Ascii.Nul;
  }

  private noteSource(index: number, start: number): void {
    if (index === this.sourceStarts.length) {
      const next = new Int32Array(index * 2);
      next.set(this.sourceStarts);
      this.sourceStarts = next;
    }
    this.sourceStarts[index] = start;
  }

  /** Reads one token starting at `p`; returns the position after it (and its terminator). */
  private token(p: number): number {
    const tokenStart = p;
    let quote = 0;
    this.simple = true;
    this.srcStart = p;
    for (;;) {
      const c = this.at(p);
      let done = false;
      if (quote === Ascii.DoubleQuote) {
        const next = this.at(p + 1);
        if (c === Ascii.Backslash && next === 0x78 && hexValue(this.at(p + 2)) >= 0 && hexValue(this.at(p + 3)) >= 0) {
          this.emit(hexValue(this.at(p + 2)) * 16 + hexValue(this.at(p + 3)));
          this.simple = false;
          p += 3;
        } else if (c === Ascii.Backslash && next !== Ascii.Nul) {
          this.emit(unescape(next));
          this.simple = false;
          p++;
        } else {
          done = this.quoted(c, p, Ascii.DoubleQuote);
        }
      } else if (quote === Ascii.SingleQuote) {
        if (c === Ascii.Backslash && this.at(p + 1) === Ascii.SingleQuote) {
          this.emit(Ascii.SingleQuote);
          this.simple = false;
          p++;
        } else {
          done = this.quoted(c, p, Ascii.SingleQuote);
        }
      } else if (c === Ascii.Space || c === Ascii.LF || c === Ascii.CR || c === Ascii.Tab || c === Ascii.Nul) {
        done = true;
      } else if (c === Ascii.DoubleQuote || c === Ascii.SingleQuote) {
        quote = c;
        if (p === tokenStart) this.srcStart = p + 1;
        else this.simple = false;
      } else {
        this.emit(c);
      }
      if (this.at(p) !== Ascii.Nul) p++;
      if (done) return p;
    }
  }

  /** One byte inside quotes: the closing quote (which must be followed by a blank or the end), the end (unbalanced), or content. */
  private quoted(c: number, p: number, quote: number): boolean {
    if (c === quote) {
      const next = this.at(p + 1);
      if (next !== Ascii.Nul && !isSpace(next)) throw UnbalancedQuotes();
      return true;
    }
    if (c === Ascii.Nul) throw UnbalancedQuotes();
    this.emit(c);
    return false;
  }

  private emit(byte: number): void {
    this.scratch[this.out++] = byte;
  }
}
