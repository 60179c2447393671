// Growable typed-array columns reused from statement to statement, so the hot path does not allocate.

/** An Int32Array that doubles when full; `length` is the used prefix. */
export class IntColumn {
  data: Int32Array;
  length = 0;

  constructor(capacity = 64) {
    this.data = new Int32Array(capacity);
  }

  push(value: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = value;
  }

  grow(min: number): void {
    let capacity = this.data.length * 2;
    while (capacity < min) capacity *= 2;
    const next = new Int32Array(capacity);
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }

  toArray(): number[] {
    return Array.from(this.data.subarray(0, this.length));
  }
}

/**
 * The normalized statement text, written one UTF-16 code unit at a time, with two running
 * 32-bit multiplicative hashes of everything written (the cache key). Rewinding restores the
 * hashes from a snapshot taken at that length.
 */
export class TextBuffer {
  data = new Uint16Array(256);
  length = 0;
  hashA = HASH_A_SEED;
  hashB = HASH_B_SEED;

  clear(): void {
    this.length = 0;
    this.hashA = HASH_A_SEED;
    this.hashB = HASH_B_SEED;
  }

  /** Truncates to `length`; `hashA`/`hashB` must be the values read when the buffer had that length. */
  rewind(length: number, hashA: number, hashB: number): void {
    this.length = length;
    this.hashA = hashA;
    this.hashB = hashB;
  }

  reserve(extra: number): void {
    const need = this.length + extra;
    if (need <= this.data.length) return;
    let capacity = this.data.length * 2;
    while (capacity < need) capacity *= 2;
    const next = new Uint16Array(capacity);
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }

  /** Appends text[start, end) with `fold`: 0 as is, 1 ASCII upper case, 2 ASCII lower case. */
  append(text: string, start: number, end: number, fold: 0 | 1 | 2): void {
    let n = this.length;
    if (n + end - start > this.data.length) this.reserve(end - start);
    const data = this.data;
    let a = this.hashA;
    let b = this.hashB;
    for (let i = start; i < end; i++) {
      let c = text.charCodeAt(i);
      if (fold === 1) {
        if (c >= 0x61 && c <= 0x7a) c -= 0x20;
      } else if (fold === 2 && c >= 0x41 && c <= 0x5a) c += 0x20;
      data[n++] = c;
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
    }
    this.length = n;
    this.hashA = a;
    this.hashB = b;
  }

  appendCode(c: number): void {
    if (this.length === this.data.length) this.reserve(1);
    this.data[this.length++] = c;
    this.hashA = Math.imul(this.hashA ^ c, 0x01000193);
    this.hashB = Math.imul(this.hashB ^ c, 0x5bd1e995);
  }

  /** True when [a, a + n) and [b, b + n) hold the same code units. */
  same(a: number, b: number, n: number): boolean {
    const data = this.data;
    for (let i = 0; i < n; i++) if (data[a + i] !== data[b + i]) return false;
    return true;
  }

  /** A 52-bit key of the content, exact as a double. Equal text gives equal keys; compare text on a hit (equals). */
  key(): number {
    let b = this.hashB ^ this.length;
    b = Math.imul(b ^ (b >>> 15), 0x2c1b3c6d);
    b ^= b >>> 13;
    return (this.hashA >>> 0) * 0x100000 + (b >>> 12);
  }

  /** True when the content equals `text`. */
  equals(text: string): boolean {
    const n = this.length;
    if (text.length !== n) return false;
    const data = this.data;
    for (let i = 0; i < n; i++) if (data[i] !== text.charCodeAt(i)) return false;
    return true;
  }

  toString(): string {
    const n = this.length;
    let out = '';
    for (let i = 0; i < n; i += 4096) {
      out += String.fromCharCode.apply(null, this.data.subarray(i, Math.min(n, i + 4096)) as unknown as number[]);
    }
    return out;
  }
}

const HASH_A_SEED = 0x811c9dc5 | 0;
const HASH_B_SEED = 0x9747b28c | 0;
