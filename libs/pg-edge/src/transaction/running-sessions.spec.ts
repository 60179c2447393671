import { RunningSessions, type DeadlineWatched } from './running-sessions';

const session = (checked: string[], name: string, onCheck?: () => void): DeadlineWatched & { name: string } => ({
  name,
  runningSlot: -1,
  checkDeadline() {
    checked.push(name);
    onCheck?.();
  },
});

describe('RunningSessions', () => {
  it('holds each session once, removes any of them, and visits the rest', () => {
    const checked: string[] = [];
    const running = new RunningSessions();
    const [a, b, c] = [session(checked, 'a'), session(checked, 'b'), session(checked, 'c')];
    running.add(a);
    running.add(b);
    running.add(b);
    running.add(c);
    expect(running.size).toBe(3);
    running.delete(a);
    running.delete(a);
    expect(running.size).toBe(2);
    expect(a.runningSlot).toBe(-1);
    expect([running.has(a), running.has(b), running.has(c)]).toEqual([false, true, true]);
    running.checkDeadlines(0);
    expect(checked.sort()).toEqual(['b', 'c']);
    running.delete(c);
    running.delete(b);
    expect(running.size).toBe(0);
    running.add(a);
    expect(running.has(a)).toBe(true);
  });

  it('visits every member once while checks remove sessions and add others', () => {
    const checked: string[] = [];
    const running = new RunningSessions();
    const late = session(checked, 'late');
    const members: ReturnType<typeof session>[] = [];
    for (let i = 0; i < 5; i++) {
      const s: ReturnType<typeof session> = session(checked, `s${i}`, () => {
        running.delete(s);
        if (i === 2) {
          running.delete(members[4] as DeadlineWatched);
          running.add(late);
        }
      });
      members.push(s);
      running.add(s);
    }
    running.checkDeadlines(0);
    expect(checked.sort()).toEqual(['s0', 's1', 's2', 's3', 's4']);
    expect(running.size).toBe(1);
    expect(running.has(late)).toBe(true);
  });
});
