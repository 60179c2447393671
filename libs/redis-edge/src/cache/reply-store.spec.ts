// The reply store's rules: a fill racing an invalidation or a flush is poisoned, one ticket per key,
// generations flipped under the byte budget, entries past max age not served, MGET-only nils.
import { ReplyStore } from './reply-store';
import { FillAdmission } from './admission';

const frame = (text: string) => Buffer.from(`$${text.length}\r\n${text}\r\n`);

function filled(store: ReplyStore, key: string, text: string, now = 0): void {
  const ticket = store.arm(key);
  if (!ticket) throw new Error('no ticket');
  const f = frame(text);
  store.fill(ticket, f, 0, f.length, false, now);
}

describe('ReplyStore', () => {
  it('stores a fill and serves it', () => {
    const store = new ReplyStore(1 << 20, 1000);
    filled(store, 'k', 'v');
    expect(store.lookup('k', false, 1)?.toString()).toBe('$1\r\nv\r\n');
    expect(store.counters.fills).toBe(1);
  });

  it('poisons a fill that an invalidation raced, and one armed before a flush', () => {
    const store = new ReplyStore(1 << 20, 1000);
    const raced = store.arm('k');
    store.invalidate('k');
    store.fill(raced!, frame('old'), 0, frame('old').length, false, 0);
    expect(store.lookup('k', false, 0)).toBeUndefined();
    const flushed = store.arm('j');
    store.flush('tracker_lost');
    store.fill(flushed!, frame('old'), 0, frame('old').length, false, 0);
    expect(store.lookup('j', false, 0)).toBeUndefined();
    expect(store.counters.fillsDropped).toBe(2);
    expect(store.counters.flushes.get('tracker_lost')).toBe(1);
  });

  it('gives a key at most one fill ticket until it completes or is invalidated', () => {
    const store = new ReplyStore(1 << 20, 1000);
    const first = store.arm('k');
    expect(store.arm('k')).toBeUndefined();
    store.invalidate('k');
    const second = store.arm('k');
    expect(second).toBeDefined();
    store.fill(first!, frame('stale'), 0, frame('stale').length, false, 0);
    expect(store.lookup('k', false, 0)).toBeUndefined();
    store.fill(second!, frame('fresh'), 0, frame('fresh').length, false, 0);
    expect(store.lookup('k', false, 0)?.toString()).toContain('fresh');
  });

  it('does not serve entries older than max age', () => {
    const store = new ReplyStore(1 << 20, 1000);
    filled(store, 'k', 'v', 0);
    expect(store.lookup('k', false, 1000)).toBeDefined();
    expect(store.lookup('k', false, 1001)).toBeUndefined();
  });

  it('flips generations under the byte budget: recently used keys survive, the rest go', () => {
    const store = new ReplyStore(2000, 60_000); // ~1000 bytes per generation, ~70 bytes per entry
    for (let n = 0; n < 10; n++) filled(store, `hot${n}`, 'x');
    for (let n = 0; n < 200; n++) {
      filled(store, `cold${n}`, 'x');
      for (let h = 0; h < 10; h++) expect(store.lookup(`hot${h}`, false, 0)).toBeDefined();
    }
    expect(store.bytes).toBeLessThanOrEqual(2000);
    expect(store.lookup('cold0', false, 0)).toBeUndefined();
  });

  it('serves an MGET-only nil to MGET and not to GET', () => {
    const store = new ReplyStore(1 << 20, 1000);
    const t = store.arm('list');
    const nil = Buffer.from('$-1\r\n');
    store.fill(t!, nil, 0, nil.length, true, 0);
    expect(store.lookup('list', true, 0)?.toString()).toBe('$-1\r\n');
    expect(store.lookup('list', false, 0)).toBeUndefined();
  });
});

describe('FillAdmission', () => {
  it('admits every fill while one lookup in eight hits', () => {
    const a = new FillAdmission();
    for (let n = 0; n < 800; n++) a.record(1, n % 8 === 0);
    expect(Array.from({ length: 100 }, () => a.admit(1)).filter(Boolean).length).toBe(100);
  });

  it('floors at one key in 64 without locality: one GET in 64, one 8-key MGET in 512', () => {
    const a = new FillAdmission();
    for (let n = 0; n < 4000; n++) {
      a.record(1, false);
      a.record(8, false);
    }
    expect(Array.from({ length: 6400 }, () => a.admit(1)).filter(Boolean).length).toBe(100);
    expect(Array.from({ length: 5120 }, () => a.admit(8)).filter(Boolean).length).toBe(10);
  });

  it('admits every fill of a key count it has seen fewer than 64 lookups of (a cold cache warms up)', () => {
    const a = new FillAdmission();
    for (let n = 0; n < 63; n++) {
      a.record(1, false);
      expect(a.admit(1)).toBe(true);
    }
    a.record(1, false);
    expect(a.admit(1)).toBe(false);
  });

  it('stops filling within a few thousand lookups when a hot set gives way to no locality', () => {
    const a = new FillAdmission();
    for (let n = 0; n < 10_000; n++) a.record(1, true);
    expect(a.rate(1)).toBe(1);
    for (let n = 0; n < 3072; n++) a.record(1, false);
    expect(a.rate(1)).toBeLessThan(1 / 16);
    for (let n = 0; n < 2048; n++) a.record(1, false);
    expect(a.rate(1)).toBe(1 / 64);
  });

  it('scales with the square of the hit ratio below one in eight', () => {
    const a = new FillAdmission();
    for (let n = 0; n < 1600; n++) a.record(1, n % 16 === 0); // 1/16: (1/2)^2, a quarter
    expect(Array.from({ length: 1000 }, () => a.admit(1)).filter(Boolean).length).toBe(250);
    const b = new FillAdmission();
    for (let n = 0; n < 3200; n++) b.record(1, n % 32 === 0); // 1/32: (1/4)^2, one in 16
    expect(Array.from({ length: 1600 }, () => b.admit(1)).filter(Boolean).length).toBe(100);
  });
});
