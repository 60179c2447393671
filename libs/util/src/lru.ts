// A bounded least-recently-used map: the shape caches everywhere in dbproxy take.

export interface LruStats {
  readonly size: number;
  readonly capacity: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
}

/** Map with a fixed capacity; the least recently used entry is evicted first. */
export class BoundedLru<K, V> {
  private readonly entries = new Map<K, V>();
  private hitCount = 0;
  private missCount = 0;
  private evictionCount = 0;

  constructor(
    readonly capacity: number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`LRU capacity must be a positive integer, got ${capacity}`);
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) {
      this.missCount++;
      return undefined;
    }
    this.hitCount++;
    // Re-insert so that iteration order is least- to most-recently used.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  peek(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    if (this.entries.has(key)) this.entries.delete(key);
    else if (this.entries.size >= this.capacity) this.evictOldest();
    this.entries.set(key, value);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  stats(): LruStats {
    return { size: this.entries.size, capacity: this.capacity, hits: this.hitCount, misses: this.missCount, evictions: this.evictionCount };
  }

  private evictOldest(): void {
    const oldest = this.entries.keys().next();
    if (oldest.done) return;
    const value = this.entries.get(oldest.value) as V;
    this.entries.delete(oldest.value);
    this.evictionCount++;
    this.onEvict?.(oldest.value, value);
  }
}
