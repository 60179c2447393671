import { branchOf, gtridBytes, gtridText, parseRecoverRow, startedAt, xidSql, XidFactory } from './xid';

describe('XIDs', () => {
  it('are unique, name the coordinator and carry their start time', () => {
    const f = new XidFactory('c0ffee');
    const a = f.next(1_700_000_000_000);
    const b = f.next(1_700_000_000_000);
    expect(a).not.toBe(b);
    expect(f.owns(a)).toBe(true);
    expect(new XidFactory('beef00').owns(a)).toBe(false);
    expect(startedAt(a)).toBe(1_700_000_000_000);
    expect(startedAt('someone-else')).toBeUndefined();
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(64);
  });

  it('round-trip through XA RECOVER rows and hex SQL literals', () => {
    const x = branchOf('dbpxa.c0ffee.k.1', 3);
    const row = { formatID: 1, gtrid_length: x.gtrid.length, bqual_length: 1, data: Buffer.concat([x.gtrid, x.bqual]) };
    expect(parseRecoverRow(row)).toEqual(x);
    expect(xidSql(x)).toBe(`X'${Buffer.from('dbpxa.c0ffee.k.1').toString('hex')}',X'33',1`);
    expect(gtridBytes(gtridText(Buffer.from([0, 255])))).toEqual(Buffer.from([0, 255]));
  });
});
