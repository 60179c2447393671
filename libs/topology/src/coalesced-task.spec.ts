// CoalescedTask: shared runs, no overlap, debounce spacing, stop.
import { CoalescedTask } from './coalesced-task';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('CoalescedTask', () => {
  it('shares one run among requests made before it starts, and never runs twice at once', async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const task = new CoalescedTask(async () => {
      runs++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      await tick(20);
      running--;
    });
    await Promise.all([task.request(), task.request(), task.request()]);
    expect(runs).toBe(1);
    // a request during a run gets a run that starts after it
    const first = task.request();
    await tick(5);
    const second = task.request();
    const third = task.request();
    await Promise.all([first, second, third]);
    expect(runs).toBe(3);
    expect(maxRunning).toBe(1);
  });

  it('spaces runs by the debounce and passes failures to the requesters', async () => {
    const starts: number[] = [];
    const task = new CoalescedTask(async () => {
      starts.push(Date.now());
      if (starts.length === 1) throw new Error('boom');
    }, () => 60);
    await expect(task.request()).rejects.toThrow('boom');
    await task.request();
    expect((starts[1] as number) - (starts[0] as number)).toBeGreaterThanOrEqual(55);
  });

  it('stops running once stopped', async () => {
    let runs = 0;
    const task = new CoalescedTask(async () => void runs++);
    task.stop();
    await task.request();
    expect(runs).toBe(0);
  });
});
