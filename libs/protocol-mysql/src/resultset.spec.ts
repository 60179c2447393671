import fc from 'fast-check';
import { Capability, ServerStatus } from './capabilities';
import { BINARY_COLLATION, Collation } from './charsets';
import { columnDefinition, decodeColumnDefinition, encodeColumnDefinition, type ColumnDefinition } from './column';
import { ColumnFlag, ColumnType, type MysqlValue } from './column-types';
import { PacketWriter } from './cursor';
import { decodeEof } from './packets/eof';
import { decodeOk } from './packets/ok';
import { decodeBinaryRow, decodeColumnCount, decodeTextRow, encodeBinaryRow, encodeColumnCount, encodeResultSet, encodeTextRow, textRowCells } from './resultset';
import { decodeEveryWay, returnsOrThrowsProtocolError, thrownCode } from './testing';
import { formatTextValue, parseDateTime, parseTextValue, parseTime } from './text-values';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const P41 = Capability.Protocol41 | Capability.Transactions;

const columns: ColumnDefinition[] = [
  columnDefinition({ name: 'id', type: ColumnType.LongLong, flags: ColumnFlag.Unsigned | ColumnFlag.NotNull, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'tiny', type: ColumnType.Tiny, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'name', type: ColumnType.VarString }),
  columnDefinition({ name: 'price', type: ColumnType.NewDecimal, decimals: 2, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'ratio', type: ColumnType.Double, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'born', type: ColumnType.Date, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'at', type: ColumnType.DateTime, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'took', type: ColumnType.Time, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'doc', type: ColumnType.Blob, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'note', type: ColumnType.Blob, characterSet: Collation.utf8mb4_general_ci }),
  columnDefinition({ name: 'flags', type: ColumnType.Bit, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'y', type: ColumnType.Year, characterSet: BINARY_COLLATION }),
  columnDefinition({ name: 'gone', type: ColumnType.VarString }),
];

const row: MysqlValue[] = [
  18446744073709551615n,
  -5,
  'zoë',
  '12.50',
  0.25,
  { kind: 'date', year: 2024, month: 2, day: 29 },
  { kind: 'datetime', year: 2024, month: 2, day: 29, hour: 13, minute: 14, second: 15, microsecond: 120000 },
  { kind: 'time', negative: true, days: 1, hours: 2, minutes: 3, seconds: 4, microseconds: 0 },
  Buffer.from([0, 1, 2, 255]),
  'text in a blob',
  Buffer.from([0x05]),
  2024,
  null,
];

describe('column definitions', () => {
  it('decodes the documented example', () => {
    const col = decodeColumnDefinition(hex('03 646566 00 00 00 11 4040 76 65 72 73 69 6f 6e 5f 63 6f 6d 6d 65 6e 74 00 0c 0800 1c000000 fd 0000 1f 0000'));
    expect(col).toMatchObject({ catalog: 'def', schema: '', name: '@@version_comment', characterSet: 8, columnLength: 28, type: ColumnType.VarString, decimals: 31, defaultValue: null });
  });

  it('round-trips, with MariaDB extended metadata and a COM_FIELD_LIST default value', () => {
    const w = new PacketWriter();
    const col = columnDefinition({ name: 'c', type: ColumnType.Json, schema: 's', table: 't', orgTable: 'T', orgName: 'C', extendedMetadata: Buffer.from('\x00json'), defaultValue: Buffer.from('{}') });
    encodeColumnDefinition(w, 2, col, { mariaDbExtendedMetadata: true });
    encodeColumnDefinition(w, 3, { ...col, extendedMetadata: null, defaultValue: null });
    const [a, b] = decodeEveryWay(w.flush(), (p, i) => decodeColumnDefinition(p.payload, { mariaDbExtendedMetadata: i === 0 }));
    expect(a).toEqual(col);
    expect(b).toEqual({ ...col, extendedMetadata: null, defaultValue: null });
  });

  it('refuses a fixed part shorter than 12 bytes', () => {
    expect(thrownCode(() => decodeColumnDefinition(hex('03646566 00 00 00 01 61 00 05 0800 1c000000')))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });
});

describe('column count', () => {
  it('reads the count and the optional metadata-follows byte', () => {
    expect(decodeColumnCount(hex('03'))).toEqual({ columnCount: 3, metadataFollows: true });
    expect(decodeColumnCount(hex('03 00'), true)).toEqual({ columnCount: 3, metadataFollows: false });
    expect(decodeColumnCount(hex('fc 0001'))).toEqual({ columnCount: 256, metadataFollows: true });
    expect(thrownCode(() => decodeColumnCount(hex('fd 000001')))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });
});

describe('text rows', () => {
  it('slices cells without copying and marks NULL', () => {
    const payload = hex('01 61 fb 00 03 616263');
    const cells = textRowCells(payload, 4);
    expect(cells.map((c) => (c === null ? null : c.toString()))).toEqual(['a', null, '', 'abc']);
    expect(cells[0]?.buffer).toBe(payload.buffer);
    expect(thrownCode(() => textRowCells(payload, 3))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => textRowCells(payload, 5))).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
  });

  it('round-trips typed values, fed every way, several rows in one chunk', () => {
    const w = new PacketWriter();
    encodeTextRow(w, 5, row);
    encodeTextRow(w, 6, row.map(() => null));
    const rows = decodeEveryWay(w.flush(), (p) => decodeTextRow(p.payload, columns));
    expect(rows).toEqual([row, row.map(() => null)]);
  });

  it('parses the text forms servers send', () => {
    expect(parseDateTime('2024-02-29 13:14:15.5')).toEqual({ kind: 'datetime', year: 2024, month: 2, day: 29, hour: 13, minute: 14, second: 15, microsecond: 500000 });
    expect(parseTime('-838:59:59')).toEqual({ kind: 'time', negative: true, days: 34, hours: 22, minutes: 59, seconds: 59, microseconds: 0 });
    expect(parseTextValue(Buffer.from('-9223372036854775808'), { type: ColumnType.LongLong, binary: true })).toBe(-9223372036854775808n);
    expect(parseTextValue(Buffer.from('1e3'), { type: ColumnType.Double, binary: true })).toBe(1000);
    expect(formatTextValue({ kind: 'time', negative: false, days: 0, hours: 1, minutes: 2, seconds: 3, microseconds: 40 })).toBe('01:02:03.000040');
    expect(thrownCode(() => parseTextValue(Buffer.from('12x'), { type: ColumnType.Long, binary: true }))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => parseTextValue(Buffer.from(''), { type: ColumnType.Float, binary: true }))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => parseTextValue(Buffer.from('2024-2-1'), { type: ColumnType.Date, binary: true }))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });
});

describe('binary rows', () => {
  it('round-trips typed values with the NULL bitmap offset by two bits', () => {
    const w = new PacketWriter();
    encodeBinaryRow(w, 3, columns, row);
    const withNulls = row.map((v, i) => (i % 3 === 0 ? null : v));
    encodeBinaryRow(w, 4, columns, withNulls);
    const rows = decodeEveryWay(w.flush(), (p) => decodeBinaryRow(p.payload, columns));
    expect(rows).toEqual([row, withNulls]);
  });

  it('decodes the documented example (one column, value "foo")', () => {
    const col = [columnDefinition({ name: 'a', type: ColumnType.VarString })];
    expect(decodeBinaryRow(hex('00 00 03 666f6f'), col)).toEqual(['foo']);
    expect(decodeBinaryRow(hex('00 04'), col)).toEqual([null]);
    expect(thrownCode(() => decodeBinaryRow(hex('01 00 03 666f6f'), col))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => decodeBinaryRow(hex('00 00 03 666f6f 00'), col))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });

  it('row decoders return or throw typed protocol errors on mutated rows (property)', () => {
    const w = new PacketWriter();
    encodeBinaryRow(w, 0, columns, row);
    encodeTextRow(w, 1, row);
    const out = w.flush();
    const binary = out.subarray(4, 4 + out.readUIntLE(0, 3));
    const text = out.subarray(8 + binary.length);
    fc.assert(
      fc.property(fc.nat(200), fc.nat(200), fc.integer({ min: 0, max: 255 }), (cut, at, byte) => {
        for (const [base, decode] of [
          [binary, decodeBinaryRow],
          [text, decodeTextRow],
        ] as const) {
          const bytes = Buffer.from(base.subarray(0, cut % (base.length + 1)));
          if (at < bytes.length) bytes[at] = byte;
          returnsOrThrowsProtocolError(() => decode(bytes, columns));
        }
      }),
    );
  });
});

describe('encodeResultSet', () => {
  it.each([
    ['with EOF packets', P41],
    ['with CLIENT_DEPRECATE_EOF', P41 | Capability.DeprecateEof],
  ])('writes count, definitions, rows and terminator %s', (_name, caps) => {
    const w = new PacketWriter();
    const end = encodeResultSet(w, 1, { columns: columns.slice(0, 3), rows: [row.slice(0, 3), [1n, 2, null]], end: { statusFlags: ServerStatus.Autocommit } }, caps);
    const deprecate = (caps & Capability.DeprecateEof) !== 0;
    const packets = decodeEveryWay(w.flush(), (p) => p);
    expect(end).toBe(packets.length + 1);
    expect(packets.map((p) => p.sequenceId)).toEqual(packets.map((_, i) => i + 1));
    expect(decodeColumnCount(packets[0].payload).columnCount).toBe(3);
    expect(packets.slice(1, 4).map((p) => decodeColumnDefinition(p.payload).name)).toEqual(['id', 'tiny', 'name']);
    const rowsAt = deprecate ? 4 : 5;
    if (!deprecate) expect(decodeEof(packets[4].payload).statusFlags).toBe(ServerStatus.Autocommit);
    expect(decodeTextRow(packets[rowsAt + 1].payload, columns.slice(0, 3))).toEqual([1n, 2, null]);
    const last = packets[packets.length - 1].payload;
    expect(deprecate ? decodeOk(last, caps).statusFlags : decodeEof(last).statusFlags).toBe(ServerStatus.Autocommit);
  });

  it('encodes counts of 251 and more columns with a 3-byte length', () => {
    const w = new PacketWriter();
    encodeColumnCount(w, 1, 300);
    expect(w.flush().subarray(4).toString('hex')).toBe('fc2c01');
  });
});

describe('encoder failures leave the writer usable', () => {
  it('drops a half-written row or result set and keeps what was written before', () => {
    const w = new PacketWriter();
    encodeColumnCount(w, 1, 1);
    const before = w.length;
    const cols = [columnDefinition({ name: 't', type: ColumnType.Tiny })];
    expect(thrownCode(() => encodeBinaryRow(w, 2, cols, [1000]))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(w.length).toBe(before);
    expect(thrownCode(() => encodeResultSet(w, 2, { columns: cols, rows: [[1], [1000]], binary: true }, P41))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
    expect(w.length).toBe(before);
    encodeBinaryRow(w, 2, cols, [7]);
    const packets = decodeEveryWay(w.flush(), (p) => p.payload.toString('hex'));
    expect(packets).toEqual(['01', '000007']);
  });
});
