// The waiter FIFO: order, removal from anywhere, and no cost that grows with the queue.
import { Waiter, WaiterQueue } from './waiter-queue';

const waiter = (tag: number) => new Waiter<number>(false, tag, () => undefined, () => undefined);

function tags(queue: WaiterQueue<number>): number[] {
  const out: number[] = [];
  for (let w = queue.head; w !== undefined; w = w.next) out.push(w.startedAt);
  return out;
}

describe('WaiterQueue', () => {
  it('keeps FIFO order and unlinks from the head, the middle and the tail', () => {
    const queue = new WaiterQueue<number>();
    const ws = [1, 2, 3, 4, 5].map(waiter);
    ws.forEach((w) => queue.push(w));
    expect(tags(queue)).toEqual([1, 2, 3, 4, 5]);
    queue.remove(ws[2]);
    queue.remove(ws[0]);
    queue.remove(ws[4]);
    expect(tags(queue)).toEqual([2, 4]);
    expect(queue.length).toBe(2);
    queue.push(waiter(6));
    expect(tags(queue)).toEqual([2, 4, 6]);
  });

  it('ignores removing a waiter twice', () => {
    const queue = new WaiterQueue<number>();
    const a = waiter(1);
    queue.push(a);
    queue.push(waiter(2));
    queue.remove(a);
    queue.remove(a);
    expect(queue.length).toBe(1);
    expect(tags(queue)).toEqual([2]);
  });

  it('takeAll empties it oldest first', () => {
    const queue = new WaiterQueue<number>();
    [1, 2, 3].map(waiter).forEach((w) => queue.push(w));
    expect(queue.takeAll().map((w) => w.startedAt)).toEqual([1, 2, 3]);
    expect(queue.length).toBe(0);
    expect(queue.head).toBeUndefined();
  });

  it('removes from the middle of a long queue without walking it', () => {
    const queue = new WaiterQueue<number>();
    const ws = Array.from({ length: 50_000 }, (_, i) => waiter(i));
    ws.forEach((w) => queue.push(w));
    // Every other waiter leaves (aborts): O(1) each, so the whole pass stays linear.
    for (let i = 1; i < ws.length; i += 2) queue.remove(ws[i]);
    expect(queue.length).toBe(25_000);
    expect(queue.head?.startedAt).toBe(0);
    expect(queue.head?.next?.startedAt).toBe(2);
  });
});
