// The client's view of failed copies: the warning count patched into the backend's own OK/EOF, and
// the edge's rows appended to the backend's SHOW WARNINGS result, renumbered; savepoint names.
import {
  Capability,
  ColumnType,
  PacketFramer,
  PacketWriter,
  columnDefinition,
  decodeOk,
  encodeOk,
  encodeResultSet,
  textRowCells,
  type MysqlPacket,
} from '@dbproxy/protocol-mysql';
import { CopyLane } from './copy-lane';
import { addWarnings, isShowWarnings, mergeWarnings, warningOf } from './fanout-warnings';
import { savepointName } from './session-fanout';

const CAPS = Capability.Protocol41 | Capability.Transactions;
const frames = (b: Buffer): MysqlPacket[] => {
  const out: MysqlPacket[] = [];
  new PacketFramer().feed(b, (p) => void out.push(p));
  return out;
};
const COLUMNS = ['Level', 'Code', 'Message'].map((name) => columnDefinition({ name, type: name === 'Code' ? ColumnType.Long : ColumnType.VarString }));

describe('fanout warnings', () => {
  it('raises the warning count of an OK in place, keeping affected rows, insert id and info', () => {
    const w = new PacketWriter();
    encodeOk(w, 1, { affectedRows: 300, lastInsertId: 70000, statusFlags: 2, warnings: 1, info: 'Records: 3  Duplicates: 0  Warnings: 1' }, CAPS);
    const ok = w.flush();
    addWarnings(ok, 2);
    const decoded = decodeOk((frames(ok)[0] as MysqlPacket).payload, CAPS);
    expect(decoded).toMatchObject({ affectedRows: 300n, lastInsertId: 70000n, statusFlags: 2, warnings: 3, info: 'Records: 3  Duplicates: 0  Warnings: 1' });
  });

  it('raises the count of the EOF that ends a result set (INSERT ... RETURNING)', () => {
    const w = new PacketWriter();
    encodeResultSet(w, 1, { columns: [columnDefinition({ name: 'id', type: ColumnType.Long })], rows: [[1]] }, CAPS);
    const rs = w.flush();
    addWarnings(rs, 1);
    const end = frames(rs).pop() as MysqlPacket;
    expect(end.payload[0]).toBe(0xfe);
    expect(end.payload.readUInt16LE(1)).toBe(1);
  });

  it('leaves an ERR as it is', () => {
    const err = Buffer.from([5, 0, 0, 1, 0xff, 0x10, 0x04, 0x41, 0x42]);
    const copy = Buffer.from(err);
    addWarnings(copy, 1);
    expect(copy).toEqual(err);
  });

  it('appends the edge rows to the backend SHOW WARNINGS result, renumbered, the backend rows first', () => {
    const w = new PacketWriter();
    encodeResultSet(w, 1, { columns: COLUMNS, rows: [['Warning', 1062, "Duplicate entry '21' for key 'PRIMARY'"]] }, CAPS);
    const backend = w.flush();
    const row = warningOf({ fanout: 'audit', shard: 's2', backend: 'db-s2', result: 'failed', code: 1429, message: 'Cannot connect' });
    const merged = frames(mergeWarnings(backend, [row]));
    // count, 3 definitions, EOF, 2 rows, EOF
    expect(merged.map((p) => p.sequenceId)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const cells = textRowCells((merged[6] as MysqlPacket).payload, 3).map((c) => c?.toString());
    expect(cells).toEqual(['Warning', '1296', 'Got error 1429 \'Cannot connect\' from fanout "audit" copy to shard "s2" (backend "db-s2")']);
    expect(textRowCells((merged[5] as MysqlPacket).payload, 3)[1]?.toString()).toBe('1062');
  });

  it('fills an empty backend result with the edge rows', () => {
    const w = new PacketWriter();
    encodeResultSet(w, 1, { columns: COLUMNS, rows: [] }, CAPS | Capability.DeprecateEof);
    const merged = frames(mergeWarnings(w.flush(), [warningOf({ fanout: 'f', shard: 's', backend: null, result: 'timeout', code: 1969, message: 'late' })]));
    expect(merged).toHaveLength(6);
    expect(textRowCells((merged[4] as MysqlPacket).payload, 3)[2]?.toString()).toContain('(no usable primary)');
  });

  it('knows SHOW WARNINGS and savepoint names', () => {
    expect(isShowWarnings('SHOW WARNINGS')).toBe(true);
    expect(isShowWarnings('/* x */ show warnings limit 5')).toBe(true);
    expect(isShowWarnings('SHOW ERRORS')).toBe(false);
    expect(savepointName('SAVEPOINT sp1')).toBe('sp1');
    expect(savepointName('ROLLBACK TO SAVEPOINT `My sp`')).toBe('my sp');
    expect(savepointName('rollback work to sp2;')).toBe('sp2');
    expect(savepointName('RELEASE SAVEPOINT Sp1')).toBe('sp1');
  });
});

describe('copy lane', () => {
  it('lets `limit` copies run, queues the rest in order, and times out waiters', async () => {
    const lane = new CopyLane(2);
    const far = Date.now() + 10_000;
    expect(await lane.enter(far)).toBe(true);
    expect(await lane.enter(far)).toBe(true);
    const order: string[] = [];
    const third = lane.enter(far).then((ok) => order.push(`third ${ok}`));
    void lane.enter(Date.now() + 30).then((ok) => order.push(`late ${ok}`));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(order).toEqual(['late false']);
    lane.done();
    await third;
    expect(order).toEqual(['late false', 'third true']);
    expect(lane.running).toBe(2);
    expect(lane.maxInFlight).toBe(2);
    lane.done();
    lane.done();
    expect(lane.running).toBe(0);
  });
});
