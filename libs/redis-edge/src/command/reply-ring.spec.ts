// Replies leave in sequence order whatever order they arrive in; pushes never overtake owed replies.
import fc from 'fast-check';
import { OutputQueue } from '../io/output-queue';
import { ReplyRing, SEQ_MASK } from './reply-ring';

const frame = (text: string): Buffer => Buffer.from(text);

describe('reply ring', () => {
  it('emits replies in sequence order when they arrive out of order', () => {
    const out = new OutputQueue();
    const ring = new ReplyRing(out);
    const seqs = [ring.reserve(), ring.reserve(), ring.reserve()];
    expect(ring.fill(seqs[2], frame('c'), 0, 1)).toBe(false);
    expect(ring.fill(seqs[1], frame('b'), 0, 1)).toBe(false);
    expect(out.empty).toBe(true);
    expect(ring.fill(seqs[0], frame('a'), 0, 1)).toBe(true);
    expect(out.take().toString()).toBe('abc');
    expect(ring.outstanding).toBe(0);
  });

  it('ignores a second reply for the same sequence', () => {
    const out = new OutputQueue();
    const ring = new ReplyRing(out);
    const seq = ring.reserve();
    ring.fill(seq, frame('x'), 0, 1);
    expect(ring.fill(seq, frame('y'), 0, 1)).toBe(false);
    expect(out.take().toString()).toBe('x');
  });

  it('sends a push at once when nothing is owed, and after the owed replies otherwise', () => {
    const out = new OutputQueue();
    const ring = new ReplyRing(out);
    expect(ring.push(frame('p1'), 0, 2)).toBe(true);
    const seq = ring.reserve();
    expect(ring.push(frame('p2'), 0, 2)).toBe(false);
    ring.fill(seq, frame('r'), 0, 1);
    expect(out.take().toString()).toBe('p1rp2');
  });

  it('keeps order for any arrival permutation, across growth and sequence wrap-around', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer(), (n, seed) => {
        const out = new OutputQueue();
        const ring = new ReplyRing(out);
        // start near the wrap point
        (ring as unknown as { head: number; tail: number }).head = SEQ_MASK - 50;
        (ring as unknown as { head: number; tail: number }).tail = SEQ_MASK - 50;
        const seqs = Array.from({ length: n }, () => ring.reserve());
        const order = seqs.map((s, i) => [s, i] as const).sort((a, b) => ((a[1] * 7919 + seed) % 101) - ((b[1] * 7919 + seed) % 101));
        for (const [seq, i] of order) ring.fill(seq, frame(`${i},`), 0, `${i},`.length);
        expect(out.take().toString()).toBe(seqs.map((_, i) => `${i},`).join(''));
        expect(ring.outstanding).toBe(0);
      }),
      { numRuns: 50 },
    );
  });
});
