import { decodeRecords, encodeRecord, HEADER_BYTES, type JournalRecord } from './record-codec';

const RECORDS: JournalRecord[] = [
  { t: 'journal', coordinator: 'abc', createdAt: 1 },
  { t: 'commit', xid: 'dbpxa.abc.k.1', branches: [{ shard: 's1', backend: 'p1', bqual: '0' }], at: 2 },
  { t: 'done', xid: 'dbpxa.abc.k.1' },
];

describe('journal record framing', () => {
  const whole = Buffer.concat(RECORDS.map(encodeRecord));

  it('reads back every record of a whole file', () => {
    expect(decodeRecords(whole)).toEqual({ records: RECORDS, validBytes: whole.length });
  });

  it('cut at every byte: keeps exactly the whole records before the cut and never misreads a partial one', () => {
    const ends = RECORDS.map(encodeRecord).reduce<number[]>((acc, f) => [...acc, (acc.at(-1) ?? 0) + f.length], []);
    for (let cut = 0; cut < whole.length; cut++) {
      const decoded = decodeRecords(whole.subarray(0, cut));
      const complete = ends.filter((e) => e <= cut);
      expect(decoded.records).toEqual(RECORDS.slice(0, complete.length));
      expect(decoded.validBytes).toBe(complete.at(-1) ?? 0);
      expect(decoded.tornReason === undefined).toBe(cut === decoded.validBytes);
    }
  });

  it('stops at a record whose checksum fails (a flipped payload byte)', () => {
    const bad = Buffer.from(whole);
    const second = encodeRecord(RECORDS[0] as JournalRecord).length;
    bad[second + HEADER_BYTES + 3] ^= 0x20;
    const decoded = decodeRecords(bad);
    expect(decoded.records).toEqual(RECORDS.slice(0, 1));
    expect(decoded.validBytes).toBe(second);
    expect(decoded.tornReason).toMatch(/checksum/);
  });

  it('stops at an impossible length (zeroed preallocated tail)', () => {
    const decoded = decodeRecords(Buffer.concat([whole, Buffer.alloc(64)]));
    expect(decoded.records).toEqual(RECORDS);
    expect(decoded.tornReason).toMatch(/impossible length 0/);
  });
});
