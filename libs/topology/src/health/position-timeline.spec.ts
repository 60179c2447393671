// PositionTimeline: lag of a replica from when the primary was first seen past its position.
import { PositionTimeline } from './position-timeline';

describe('PositionTimeline', () => {
  it('knows nothing before the primary was seen, or without a replica position', () => {
    const timeline = new PositionTimeline();
    expect(timeline.stalenessSeconds(5n, 1000)).toBeNull();
    timeline.record(10n, 0);
    expect(timeline.stalenessSeconds(null, 1000)).toBeNull();
  });

  it('measures a replica from the first time the primary was seen past its position', () => {
    const timeline = new PositionTimeline();
    timeline.record(10n, 1_000);
    timeline.record(10n, 2_000); // unchanged: keeps the first sighting
    timeline.record(20n, 3_000);
    timeline.record(30n, 4_000);
    expect(timeline.stalenessSeconds(30n, 5_000)).toBe(0);
    expect(timeline.stalenessSeconds(35n, 5_000)).toBe(0);
    expect(timeline.stalenessSeconds(20n, 5_000)).toBe(1); // missing what the primary had at 4 s
    expect(timeline.stalenessSeconds(15n, 5_000)).toBe(2);
    expect(timeline.stalenessSeconds(5n, 5_000)).toBe(4);
    // a replica answer older than the first sighting ahead of it is not behind
    expect(timeline.stalenessSeconds(20n, 3_500)).toBe(0);
  });

  it('starts over when the primary position goes backwards (a new primary or a reset)', () => {
    const timeline = new PositionTimeline();
    timeline.record(100n, 1_000);
    timeline.record(5n, 2_000);
    expect(timeline.stalenessSeconds(5n, 3_000)).toBe(0);
    expect(timeline.stalenessSeconds(4n, 3_000)).toBe(1);
  });

  it('keeps at most maxSamples and nothing older than maxAgeMs (but always the latest)', () => {
    const timeline = new PositionTimeline(3, 10_000);
    for (let i = 1; i <= 5; i++) timeline.record(BigInt(i), i * 1_000);
    // samples 3, 4, 5 remain: a replica at 1 is at least as old as the oldest kept sample
    expect(timeline.stalenessSeconds(1n, 6_000)).toBe(3);
    timeline.record(6n, 100_000);
    expect(timeline.stalenessSeconds(5n, 100_000)).toBe(0);
    expect(timeline.stalenessSeconds(1n, 101_000)).toBe(1);
  });
});
