// The join rule shared by the edges' pipelined reads: the least queued lending below the depth that
// the edge accepts, joins counted, a lending leaving the set at the depth or when removed.
import { JoinableLendings, type JoinableLending } from './joinable-lendings';

class Lent implements JoinableLending {
  joined = 1;
  queued = 1;
  constructor(readonly id: number) {}
}

const any = (): boolean => true;

/** A join as an edge does it: the registry counts the join, the edge its queued unit. */
function join(set: JoinableLendings<string, Lent>, key: string, depth: number, usable: (l: Lent) => boolean = any): Lent | undefined {
  const lent = set.join(key, depth, usable);
  if (lent) lent.queued++;
  return lent;
}

describe('JoinableLendings', () => {
  it('joins the least queued lending of the key, the first on a tie, and only lendings the edge accepts', () => {
    const set = new JoinableLendings<string, Lent>();
    const [a, b, other] = [new Lent(1), new Lent(2), new Lent(3)];
    set.add('db', a);
    set.add('db', b);
    set.add('other', other);
    expect(join(set, 'db', 8)).toBe(a);
    expect(join(set, 'db', 8)).toBe(b);
    expect(join(set, 'db', 8, (l) => l.id === 2)).toBe(b);
    expect(join(set, 'db', 8)).toBe(a);
    expect(join(set, 'db', 8, () => false)).toBeUndefined();
    expect(join(set, 'nobody', 8)).toBeUndefined();
    expect([a.queued, a.joined, b.queued, b.joined, other.joined]).toEqual([3, 3, 3, 3, 1]);
  });

  it('stops offering a lending once it took `depth` units in all, even when they are done', () => {
    const set = new JoinableLendings<string, Lent>();
    const a = new Lent(1);
    set.add('db', a);
    expect(join(set, 'db', 3)).toBe(a);
    a.queued = 1; // the joiner finished
    expect(join(set, 'db', 3)).toBe(a);
    expect(a.joined).toBe(3);
    expect(set.count()).toBe(0);
    expect(join(set, 'db', 3)).toBeUndefined();
  });

  it('skips a lending over a smaller depth (a new configuration epoch) and forgets removed ones', () => {
    const set = new JoinableLendings<string, Lent>();
    const [a, b] = [new Lent(1), new Lent(2)];
    set.add('db', a);
    set.add('db', b);
    a.joined = 5;
    expect(join(set, 'db', 4)).toBe(b);
    expect(set.remove('db', b)).toBe(true);
    expect(set.remove('db', b)).toBe(false);
    expect(join(set, 'db', 4)).toBeUndefined();
    expect(set.count()).toBe(1);
  });
});
