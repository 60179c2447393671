import { BoundedLru } from './lru';

describe('BoundedLru', () => {
  it('evicts the least recently used entry at capacity and counts it', () => {
    const evicted: string[] = [];
    const lru = new BoundedLru<string, number>(2, (k) => evicted.push(k));
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now most recent
    lru.set('c', 3);
    expect(evicted).toEqual(['b']);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.stats()).toEqual({ size: 2, capacity: 2, hits: 1, misses: 1, evictions: 1 });
  });

  it('rejects a non-positive capacity', () => {
    expect(() => new BoundedLru(0)).toThrow(RangeError);
  });
});
