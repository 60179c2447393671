// The reply store's key filter stays exact through fills, invalidations, old-generation hits, flips,
// expiry and flushes: a key is found by its bytes' bucket exactly when the store holds it.
import { bucketOfBytes, bucketOfKey, KeyFilter } from './key-filter';
import { ReplyStore } from './reply-store';

const frame = (text: string) => Buffer.from(`$${text.length}\r\n${text}\r\n`);

function fill(store: ReplyStore, key: string, now = 0): void {
  const ticket = store.arm(key);
  if (!ticket) throw new Error('no ticket');
  const f = frame('value');
  store.fill(ticket, f, 0, f.length, false, now);
}

/** What a GET's lookup through the filter finds, as cached-commands.ts does it. */
function found(store: ReplyStore, key: string, now = 0): boolean {
  const bytes = Buffer.from(`xx${key}yy`, 'latin1');
  if (!store.filter.mayHold(bucketOfBytes(bytes, 2, bytes.length - 2))) return false;
  return store.lookup(key, false, now) !== undefined;
}

describe('KeyFilter', () => {
  it('never says no for a bucket in use: a saturated bucket stays "maybe" until cleared', () => {
    const filter = new KeyFilter();
    for (let n = 0; n < 300; n++) filter.added(7);
    for (let n = 0; n < 299; n++) filter.removed(7);
    expect(filter.mayHold(7)).toBe(true);
    filter.clear();
    expect(filter.mayHold(7)).toBe(false);
    filter.added(8);
    filter.removed(8);
    expect(filter.mayHold(8)).toBe(false);
  });

  it('hashes a key string and its bytes to the same bucket', () => {
    for (const key of ['', 'k', 'key:000000123456', '\u00ff\u0000binary', 'x'.repeat(300)]) {
      expect(bucketOfKey(key)).toBe(bucketOfBytes(Buffer.from(key, 'latin1'), 0, key.length));
    }
  });

  it('holds a bucket exactly while the store holds a key in it', () => {
    // Each generation holds at most 1000 bytes: entries of ~85 bytes flip every ~11 fills.
    const store = new ReplyStore(2000, 1000);
    const keys = Array.from({ length: 200 }, (_, n) => `key:${n}`);
    for (const key of keys) fill(store, key);
    const held = keys.filter((key) => store.lookup(key, false, 0) !== undefined);
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(keys.length); // flips dropped the oldest
    for (const key of keys) expect(found(store, key)).toBe(held.includes(key));
    // The keys flips dropped left their buckets (unless a held key shares one).
    const heldBuckets = new Set(held.map(bucketOfKey));
    for (const key of keys) expect(store.filter.mayHold(bucketOfKey(key))).toBe(heldBuckets.has(bucketOfKey(key)));
    // Invalidation and old-generation hits keep it exact.
    store.invalidate(held[held.length - 1]);
    expect(found(store, held[held.length - 1])).toBe(false);
    // Expired entries leave it when a lookup drops them.
    const late = new ReplyStore(1 << 20, 10);
    fill(late, 'old', 0);
    expect(found(late, 'old', 100)).toBe(false);
    expect(late.filter.mayHold(bucketOfKey('old'))).toBe(false);
    // A flush empties it.
    fill(store, 'again');
    store.flush('write');
    expect(store.filter.mayHold(bucketOfKey('again'))).toBe(false);
    for (const key of keys) expect(store.filter.mayHold(bucketOfKey(key))).toBe(false);
  });
});
