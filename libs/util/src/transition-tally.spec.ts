import { transitionTallies, transitionTally } from './transition-tally';

describe('transition tallies', () => {
  it('counts moves per kind and target state, one tally per kind for the whole process', () => {
    const a = transitionTally('tally-spec-session');
    a.count('running');
    a.count('idle');
    transitionTally('tally-spec-session').count('running');
    transitionTally('tally-spec-backend').count('running');
    expect(transitionTally('tally-spec-session')).toBe(a);
    expect(Object.fromEntries(a.entries())).toEqual({ running: 2, idle: 1 });
    expect(Object.fromEntries(transitionTally('tally-spec-backend').entries())).toEqual({ running: 1 });
    expect([...transitionTallies()].map((t) => t.kind)).toEqual(expect.arrayContaining(['tally-spec-session', 'tally-spec-backend']));
  });

  it('counts every move whatever order the states come in (two recent states are kept beside the map)', () => {
    const tally = transitionTally('tally-spec-order');
    const moves = ['idle', 'running', 'idle', 'running', 'closed', 'idle', 'idle', 'lent', 'running', 'lent', 'lent', 'closed', 'running'];
    const expected: Record<string, number> = {};
    for (const to of moves) {
      tally.count(to);
      expected[to] = (expected[to] ?? 0) + 1;
    }
    expect(Object.fromEntries(tally.entries())).toEqual(expected);
  });
});
