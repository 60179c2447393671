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
});
