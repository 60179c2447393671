import { fit, formatSeconds, formatTable, orDash } from './table';

describe('formatTable', () => {
  it('pads columns to their widest cell, right-aligns numbers and leaves no trailing spaces', () => {
    const lines = formatTable(
      [
        { header: 'NAME', cell: (r: { n: string; v: number | null }) => r.n },
        { header: 'V', cell: (r) => orDash(r.v), align: 'right' },
        { header: 'NOTE', cell: () => '' },
      ],
      [
        { n: 'a', v: 1234 },
        { n: 'longer-name', v: null },
      ],
    );
    expect(lines).toEqual(['NAME            V  NOTE', 'a            1234', 'longer-name     -']);
  });

  it('prints only the header without rows and flattens newlines in cells', () => {
    expect(formatTable([{ header: 'X', cell: (r: string) => r }], [])).toEqual(['X']);
    expect(formatTable([{ header: 'X', cell: (r: string) => r }], ['a\nb'])).toEqual(['X', 'a b']);
  });
});

describe('fit and formatSeconds', () => {
  it('cuts lines to the screen width and formats ages', () => {
    expect(fit('abcdef', 4)).toBe('abc…');
    expect(fit('abc', 4)).toBe('abc');
    expect([formatSeconds(5.7), formatSeconds(125), formatSeconds(7300)]).toEqual(['5s', '2m05s', '2h01m']);
  });
});
