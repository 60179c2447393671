// Replica choice: weights inside the lowest pressure band, determinism, margin, exclusions.
import { ReplicaSelector, type ReplicaCandidate } from './replica-selector';

const idle = (name: string, weight: number, inUse = 0, capacity = 10, waiters = 0): ReplicaCandidate => ({
  name,
  weight,
  inUse,
  waiters,
  capacity,
});

function tally(selector: ReplicaSelector, candidates: ReplicaCandidate[], rounds: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < rounds; i++) {
    const name = selector.pick(candidates) ?? 'none';
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

describe('ReplicaSelector', () => {
  it('shares picks by weight among similarly loaded replicas', () => {
    const counts = tally(new ReplicaSelector(), [idle('a', 3), idle('b', 1)], 400);
    expect(counts).toEqual({ a: 300, b: 100 });
  });

  it('interleaves picks smoothly and repeats the same sequence', () => {
    const seq = (s: ReplicaSelector) => Array.from({ length: 8 }, () => s.pick([idle('a', 2), idle('b', 1), idle('c', 1)]));
    const first = seq(new ReplicaSelector());
    expect(first).toEqual(seq(new ReplicaSelector()));
    expect(first.slice(0, 4)).toEqual(['a', 'b', 'c', 'a']);
  });

  it('avoids a pool whose pressure is materially higher than the lowest', () => {
    const selector = new ReplicaSelector({ margin: 0.25 });
    const candidates = [idle('busy', 10, 9, 10, 2), idle('calm', 1, 1, 10)];
    expect(tally(selector, candidates, 20)).toEqual({ calm: 20 });
  });

  it('keeps a pool within the margin in rotation', () => {
    const selector = new ReplicaSelector({ margin: 0.25 });
    const counts = tally(selector, [idle('a', 1, 2, 10), idle('b', 1, 4, 10)], 10);
    expect(counts).toEqual({ a: 5, b: 5 });
  });

  it('with margin 0 uses only the least pressured pools', () => {
    const selector = new ReplicaSelector({ margin: 0 });
    expect(tally(selector, [idle('a', 1, 2, 10), idle('b', 5, 3, 10)], 6)).toEqual({ a: 6 });
  });

  it('counts waiters and treats a pool without capacity as full', () => {
    const selector = new ReplicaSelector({ margin: 0.1 });
    expect(selector.pick([idle('a', 1, 0, 10, 5), idle('b', 1, 1, 10)])).toBe('b');
    expect(selector.pick([idle('z', 1, 0, 0), idle('y', 1, 10, 10)])).toBe('y');
  });

  it('returns undefined when nothing can be chosen', () => {
    const selector = new ReplicaSelector();
    expect(selector.pick([])).toBeUndefined();
    expect(selector.pick([idle('a', 0)])).toBeUndefined();
  });

  it('rejects invalid input', () => {
    expect(() => new ReplicaSelector({ margin: -1 })).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_CANDIDATE' }));
    expect(() => new ReplicaSelector().pick([idle('a', -1)])).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_CANDIDATE' }));
    expect(() => new ReplicaSelector().pick([idle('a', 1, Number.NaN)])).toThrow(
      expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_CANDIDATE' }),
    );
  });
});
