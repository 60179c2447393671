// Which keys the reply store may hold, without making a string of the key: a count per bucket of a
// hash of the key's bytes (FNV-1a). A bucket at 0 holds no stored key, so a lookup of a key that is
// not cached (the usual case without locality) costs a hash over its bytes instead of a string, its
// hash and two map probes. Buckets are counted as entries come and go, so 0 is never wrong; a bucket
// that reaches 255 stays there until a flush (it only ever says "maybe"). 2^16 one-byte buckets
// (64 KiB) stay in the CPU's cache: measured, a 4 MiB table cost more per lookup than it saved.

const BUCKET_BITS = 16;
const MASK = (1 << BUCKET_BITS) - 1;
/** A bucket this full is no longer counted (it stays "maybe" until a flush). */
const SATURATED = 255;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** The bucket of the key `buf[start, end)`. */
export function bucketOfBytes(buf: Buffer, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], FNV_PRIME);
  return (h ^ (h >>> BUCKET_BITS)) & MASK;
}

/** The bucket of a key held as a latin1 string (one char per byte): the same as bucketOfBytes of its bytes. */
export function bucketOfKey(key: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), FNV_PRIME);
  return (h ^ (h >>> BUCKET_BITS)) & MASK;
}

export class KeyFilter {
  private readonly counts = new Uint8Array(1 << BUCKET_BITS);

  /** False when no stored key has this bucket (certainly not cached). */
  mayHold(bucket: number): boolean {
    return this.counts[bucket] !== 0;
  }

  added(bucket: number): void {
    if (this.counts[bucket] !== SATURATED) this.counts[bucket]++;
  }

  removed(bucket: number): void {
    if (this.counts[bucket] !== SATURATED) this.counts[bucket]--;
  }

  clear(): void {
    this.counts.fill(0);
  }
}
