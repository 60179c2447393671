import { lsnText, parseLsn } from './causal-lsn';

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
