import { WAIT_SAMPLE_SIZE, WaitSample } from './wait-sample';

describe('WaitSample', () => {
  it('is all zero before any acquire', () => {
    expect(new WaitSample().quantiles()).toEqual({ p50: 0, p95: 0, p99: 0 });
  });

  it('gives nearest-rank quantiles of what it recorded', () => {
    const sample = new WaitSample();
    for (let ms = 1; ms <= 100; ms++) sample.record(ms);
    expect(sample.quantiles()).toEqual({ p50: 50, p95: 95, p99: 99 });
  });

  it('keeps only the most recent acquires', () => {
    const sample = new WaitSample();
    for (let i = 0; i < WAIT_SAMPLE_SIZE; i++) sample.record(1000);
    for (let i = 0; i < WAIT_SAMPLE_SIZE; i++) sample.record(2);
    expect(sample.quantiles()).toEqual({ p50: 2, p95: 2, p99: 2 });
  });
});
