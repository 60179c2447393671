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
 * The normalized statement text, written one UTF-16 code unit at a time, with a running 32-bit
 * FNV-1a hash of everything written (the cache key). Rewinding restores the hash from a
 * snapshot taken at that length.
 */
export class TextBuffer {
  data = new Uint16Array(256);
  length = 0;
  hash = HASH_SEED;

  clear(): void {
    this.length = 0;
    this.hash = HASH_SEED;
  }

  /** Truncates to `length`; `hash` must be the value read when the buffer had that length. */
  rewind(length: number, hash: number): void {
    this.length = length;
    this.hash = hash;
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
    let h = this.hash;
    if (fold === 0) {
      for (let i = start; i < end; i++) {
        const c = text.charCodeAt(i);
        data[n++] = c;
        h = Math.imul(h ^ c, 0x01000193);
      }
    } else if (fold === 1) {
      for (let i = start; i < end; i++) {
        let c = text.charCodeAt(i);
        if (c >= 0x61 && c <= 0x7a) c -= 0x20;
        data[n++] = c;
        h = Math.imul(h ^ c, 0x01000193);
      }
    } else {
      for (let i = start; i < end; i++) {
        let c = text.charCodeAt(i);
        if (c >= 0x41 && c <= 0x5a) c += 0x20;
        data[n++] = c;
        h = Math.imul(h ^ c, 0x01000193);
      }
    }
    this.length = n;
    this.hash = h;
  }

  /** Appends text[start, end), lower-casing ASCII letters outside double quotes. */
  appendName(text: string, start: number, end: number): void {
    let quoted = false;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) quoted = !quoted;
      this.appendCode(!quoted && c >= 0x41 && c <= 0x5a ? c + 0x20 : c);
    }
  }

  appendCode(c: number): void {
    if (this.length === this.data.length) this.reserve(1);
    this.data[this.length++] = c;
    this.hash = Math.imul(this.hash ^ c, 0x01000193);
  }

  /** True when [a, a + n) and [b, b + n) hold the same code units. */
  same(a: number, b: number, n: number): boolean {
    const data = this.data;
    for (let i = 0; i < n; i++) if (data[a + i] !== data[b + i]) return false;
    return true;
  }

  /**
   * The cache key: a 32-bit FNV-1a hash of the content and its length, exact as a double. Equal
   * text gives equal keys; different text rarely does, and a hit still compares text (equals).
   */
  key(): number {
    return (this.hash >>> 0) * 0x100000 + (this.length & 0xfffff);
  }

  /** True when the content equals `codes` (a copy kept from an earlier run). */
  sameAs(codes: Uint16Array): boolean {
    const n = this.length;
    if (codes.length !== n) return false;
    const data = this.data;
    for (let i = 0; i < n; i++) if (data[i] !== codes[i]) return false;
    return true;
  }

  /** A copy of the content's code units. */
  codes(): Uint16Array {
    return this.data.slice(0, this.length);
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

const HASH_SEED = 0x811c9dc5 | 0;
