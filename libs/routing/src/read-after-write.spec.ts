// The read-after-write window: primary for windowMs after the last write, disabled at 0.
import { ReadAfterWriteWindow } from './read-after-write';

describe('ReadAfterWriteWindow', () => {
  it('requires the primary until the window after the last write has passed', () => {
    const w = new ReadAfterWriteWindow(2000);
    expect(w.requiresPrimary(0)).toBe(false);
    w.noteWrite(1000);
    expect(w.requiresPrimary(1000)).toBe(true);
    expect(w.requiresPrimary(2999)).toBe(true);
    expect(w.requiresPrimary(3000)).toBe(false);
    w.noteWrite(2500);
    expect(w.requiresPrimary(4499)).toBe(true);
    expect(w.expiresAtMs()).toBe(4500);
  });

  it('keeps the latest write when notes arrive out of order', () => {
    const w = new ReadAfterWriteWindow(100);
    w.noteWrite(500);
    w.noteWrite(450);
    expect(w.requiresPrimary(590)).toBe(true);
    expect(w.requiresPrimary(600)).toBe(false);
  });

  it('treats a clock that went backwards as inside the window', () => {
    const w = new ReadAfterWriteWindow(100);
    w.noteWrite(500);
    expect(w.requiresPrimary(400)).toBe(true);
  });

  it('is disabled by a zero window', () => {
    const w = new ReadAfterWriteWindow(0);
    w.noteWrite(10);
    expect(w.requiresPrimary(10)).toBe(false);
  });

  it('forgets the write on reset and rejects invalid lengths', () => {
    const w = new ReadAfterWriteWindow(100);
    w.noteWrite(1);
    w.reset();
    expect(w.requiresPrimary(2)).toBe(false);
    expect(() => new ReadAfterWriteWindow(-1)).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_WINDOW' }));
  });
});
