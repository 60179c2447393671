import { advance, gtidText, parseGtids, reaches } from './gtid-position';

describe('GTID positions', () => {
  it('parses one GTID and lists, keeping the highest per domain', () => {
    expect(gtidText(parseGtids('0-1-42'))).toBe('0-1-42');
    expect(gtidText(parseGtids('0-1-42, 1-2-7,0-3-40'))).toBe('0-1-42,1-2-7');
    expect(parseGtids('').size).toBe(0);
    expect(parseGtids('garbage,0-1').size).toBe(0);
  });

  it('compares per domain by sequence number', () => {
    const target = parseGtids('0-1-10,1-1-3');
    expect(reaches(parseGtids('0-1-10,1-1-3'), target)).toBe(true);
    expect(reaches(parseGtids('0-2-11,1-1-4'), target)).toBe(true);
    expect(reaches(parseGtids('0-1-9,1-1-4'), target)).toBe(false);
    expect(reaches(parseGtids('0-1-10'), target)).toBe(false);
    expect(reaches(undefined, target)).toBe(false);
    expect(reaches(undefined, parseGtids(''))).toBe(true);
  });

  it('advances a position, never backwards', () => {
    const p = parseGtids('0-1-10');
    advance(p, parseGtids('0-1-8,2-1-1'));
    expect(gtidText(p)).toBe('0-1-10,2-1-1');
    advance(p, parseGtids('0-1-12'));
    expect(gtidText(p)).toBe('0-1-12,2-1-1');
  });
});
