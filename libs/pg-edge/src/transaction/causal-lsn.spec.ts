import { MetricsRegistry } from '@dbproxy/observability';
import { lsnText, parseLsn, ReplayPositions } from './causal-lsn';

describe('PostgreSQL LSNs', () => {
  it('parses and prints the X/Y form, ordering by both halves', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(lsnText(parseLsn('16/B374D848') as bigint)).toBe('16/B374D848');
    expect((parseLsn('1/0') as bigint) > (parseLsn('0/FFFFFFFF') as bigint)).toBe(true);
  });

  it('refuses what is not an LSN', () => {
    expect(parseLsn(null)).toBeNull();
    expect(parseLsn('')).toBeNull();
    expect(parseLsn('16-B3')).toBeNull();
    expect(parseLsn('123456789/0')).toBeNull();
  });
});

describe('ReplayPositions', () => {
  it('learns replay positions topology reported, never moving back, and prefers replicas that reached the target', () => {
    const positions = new ReplayPositions(new MetricsRegistry());
    positions.observed('r1', '0/3000060');
    positions.observed('r1', '0/2000000'); // an older report
    positions.observed('r2', null);
    positions.observed('r2', 'not an lsn');
    const target = parseLsn('0/3000000') as bigint;
    expect(positions.known('r1', target)).toBe(true);
    expect(positions.known('r1', parseLsn('1/0') as bigint)).toBe(false);
    expect(positions.known('r2', target)).toBe(false);
    const prefer = positions.caughtUp(target);
    expect([prefer?.('r1'), prefer?.('r2')]).toEqual([true, false]);
    expect(positions.caughtUp(undefined)).toBeUndefined();
  });
});
