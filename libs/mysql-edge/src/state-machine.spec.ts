// One transition() per state change: checked against the table and counted.
import { StateTable } from './state-machine';

describe('StateTable', () => {
  const table = () => new StateTable<'a' | 'b' | 'c'>('thing', ['a', 'b', 'c'], { a: ['b'], b: ['a', 'c'], c: [] });

  it('counts legal moves by from and to', () => {
    const t = table();
    t.move(1, 'a', 'b', 'go');
    t.move(1, 'b', 'a', 'back');
    t.move(2, 'a', 'b', 'go');
    expect(t.snapshot()).toEqual([
      { kind: 'thing', from: 'a', to: 'b', count: 2 },
      { kind: 'thing', from: 'b', to: 'a', count: 1 },
    ]);
  });

  it('throws on a move the table does not allow', () => {
    expect(() => table().move(1, 'a', 'c', 'skip')).toThrow(expect.objectContaining({ code: 'DBP_ERR_MYSQLEDGE_ILLEGAL_TRANSITION' }));
    expect(() => table().move(1, 'c', 'a', 'dead')).toThrow(/thing #1 cannot go from c to a/);
  });
});
