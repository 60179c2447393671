import fc from 'fast-check';
import { Capability } from './capabilities';
import { columnDefinition } from './column';
import { ColumnType, type MysqlValue } from './column-types';
import {
  Command,
  decodeCommand,
  encodeChangeUser,
  encodeFieldList,
  encodeQuery,
  encodeSimpleCommand,
  encodeStatementCommand,
  encodeStmtFetch,
  encodeStmtSendLongData,
  encodeTextCommand,
  type ClientCommand,
} from './commands';
import { PacketWriter } from './cursor';
import type { TypedParameter } from './parameters';
import { CursorType, decodeStmtExecute, decodeStmtPrepareOk, encodeStmtExecute, encodeStmtPrepareResponse, type StmtExecute } from './stmt';
import { decodeEveryWay, returnsOrThrowsProtocolError, thrownCode } from './testing';
import { decodeColumnDefinition } from './column';
import { decodeEof } from './packets/eof';

const P41 = Capability.Protocol41 | Capability.SecureConnection | Capability.PluginAuth | Capability.Transactions;
const ATTRS = P41 | Capability.QueryAttributes;
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('Command codes', () => {
  it('has every COM_* byte once', () => {
    const codes = Object.values(Command);
    expect(new Set(codes).size).toBe(codes.length);
    expect(Command.Query).toBe(0x03);
    expect(Command.StmtExecute).toBe(0x17);
    expect(Command.ResetConnection).toBe(0x1f);
  });
});

describe('decodeCommand', () => {
  it('decodes every encoded command fed every way, several in one chunk', () => {
    const w = new PacketWriter();
    encodeSimpleCommand(w, Command.Ping);
    encodeSimpleCommand(w, Command.Quit);
    encodeSimpleCommand(w, Command.Statistics);
    encodeSimpleCommand(w, Command.ResetConnection);
    encodeQuery(w, 'SELECT "ü"', P41);
    encodeTextCommand(w, Command.InitDb, 'shop');
    encodeFieldList(w, 'orders', 'id%');
    encodeTextCommand(w, Command.StmtPrepare, 'SELECT ?');
    encodeStatementCommand(w, Command.StmtClose, 7);
    encodeStatementCommand(w, Command.StmtReset, 8);
    encodeStmtFetch(w, 9, 100);
    encodeStmtSendLongData(w, 10, 2, Buffer.from('chunk'));
    encodeChangeUser(w, { username: 'bob', authResponse: Buffer.alloc(20, 1), database: 'db', characterSet: 45, authPlugin: 'mysql_native_password' }, P41);
    const decoded = decodeEveryWay(w.flush(), (p) => {
      expect(p.sequenceId).toBe(0);
      return decodeCommand(p.payload, { capabilities: P41 });
    });
    expect(decoded).toEqual<ClientCommand[]>([
      { kind: 'ping' },
      { kind: 'quit' },
      { kind: 'statistics' },
      { kind: 'reset-connection' },
      { kind: 'query', sql: 'SELECT "ü"', attributes: [] },
      { kind: 'init-db', schema: 'shop' },
      { kind: 'field-list', table: 'orders', wildcard: 'id%' },
      { kind: 'stmt-prepare', sql: 'SELECT ?' },
      { kind: 'stmt-close', statementId: 7 },
      { kind: 'stmt-reset', statementId: 8 },
      { kind: 'stmt-fetch', statementId: 9, rowCount: 100 },
      { kind: 'stmt-send-long-data', statementId: 10, paramId: 2, data: Buffer.from('chunk') },
      { kind: 'change-user', username: 'bob', authResponse: Buffer.alloc(20, 1), database: 'db', characterSet: 45, authPlugin: 'mysql_native_password', connectAttributes: null },
    ]);
  });

  it('reads COM_QUERY with the query-attribute prefix mysql2 sends, and with named attributes', () => {
    expect(decodeCommand(Buffer.concat([hex('03 00 01'), Buffer.from('SELECT 1')]), { capabilities: ATTRS })).toEqual({ kind: 'query', sql: 'SELECT 1', attributes: [] });
    const w = new PacketWriter();
    encodeQuery(w, 'SELECT 2', ATTRS, [
      { name: 'traceparent', type: ColumnType.VarString, unsigned: false, value: '00-abc-def-01' },
      { name: 'n', type: ColumnType.LongLong, unsigned: true, value: 5n },
      { name: 'nil', type: ColumnType.Null, unsigned: false, value: null },
    ]);
    const [q] = decodeEveryWay(w.flush(), (p) => decodeCommand(p.payload, { capabilities: ATTRS }));
    expect(q).toEqual({
      kind: 'query',
      sql: 'SELECT 2',
      attributes: [
        { name: 'traceparent', type: ColumnType.VarString, unsigned: false, value: '00-abc-def-01' },
        { name: 'n', type: ColumnType.LongLong, unsigned: true, value: 5n },
        { name: 'nil', type: ColumnType.Null, unsigned: false, value: null },
      ],
    });
    expect(thrownCode(() => encodeQuery(new PacketWriter(), 'x', P41, [{ name: 'a', type: 1, unsigned: false, value: 1 }]))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });

  it('keeps the body of known commands it does not take apart', () => {
    expect(decodeCommand(hex('12 04000000 0000 01000000 6d7973716c2d62696e2e303030303031'), { capabilities: P41 })).toMatchObject({ kind: 'other', command: Command.BinlogDump });
    expect(decodeCommand(hex('1b 0100'), { capabilities: P41 })).toEqual({ kind: 'set-option', option: 1 });
    expect(decodeCommand(hex('0c 2a000000'), { capabilities: P41 })).toEqual({ kind: 'process-kill', connectionId: 42 });
  });

  it('refuses unknown commands, MariaDB bulk execution and COM_MULTI with typed errors', () => {
    expect(thrownCode(() => decodeCommand(hex('42'), { capabilities: P41 }))).toBe('DBP_ERR_MYSQL_UNKNOWN_COMMAND');
    expect(thrownCode(() => decodeCommand(hex('fa 01000000 8000'), { capabilities: P41 }))).toBe('DBP_ERR_MYSQL_UNSUPPORTED');
    expect(thrownCode(() => decodeCommand(hex('fe 00'), { capabilities: P41 }))).toBe('DBP_ERR_MYSQL_UNSUPPORTED');
    expect(thrownCode(() => decodeCommand(Buffer.alloc(0), { capabilities: P41 }))).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
  });
});

describe('COM_STMT_EXECUTE', () => {
  const every: TypedParameter[] = [
    { type: ColumnType.Null, unsigned: false, value: null },
    { type: ColumnType.Tiny, unsigned: false, value: -7 },
    { type: ColumnType.Tiny, unsigned: true, value: 200 },
    { type: ColumnType.Short, unsigned: false, value: -300 },
    { type: ColumnType.Long, unsigned: true, value: 4000000000 },
    { type: ColumnType.LongLong, unsigned: false, value: -9007199254740993n },
    { type: ColumnType.LongLong, unsigned: true, value: 18446744073709551615n },
    { type: ColumnType.Float, unsigned: false, value: 0.5 },
    { type: ColumnType.Double, unsigned: false, value: Math.PI },
    { type: ColumnType.Decimal, unsigned: false, value: '3.14' },
    { type: ColumnType.NewDecimal, unsigned: false, value: '-99999999999999999999.99' },
    { type: ColumnType.String, unsigned: false, value: 'fixed' },
    { type: ColumnType.VarString, unsigned: false, value: 'variable ✓' },
    { type: ColumnType.VarChar, unsigned: false, value: '' },
    { type: ColumnType.TinyBlob, unsigned: false, value: Buffer.from([1]) },
    { type: ColumnType.MediumBlob, unsigned: false, value: Buffer.from([2, 2]) },
    { type: ColumnType.LongBlob, unsigned: false, value: Buffer.alloc(300, 3) },
    { type: ColumnType.Blob, unsigned: false, value: Buffer.alloc(0) },
    { type: ColumnType.Date, unsigned: false, value: { kind: 'date', year: 1999, month: 12, day: 31 } },
    { type: ColumnType.DateTime, unsigned: false, value: { kind: 'datetime', year: 2000, month: 1, day: 1, hour: 0, minute: 0, second: 1, microsecond: 0 } },
    { type: ColumnType.Timestamp, unsigned: false, value: { kind: 'datetime', year: 2038, month: 1, day: 19, hour: 3, minute: 14, second: 7, microsecond: 999999 } },
    { type: ColumnType.Time, unsigned: false, value: { kind: 'time', negative: true, days: 34, hours: 22, minutes: 59, seconds: 59, microseconds: 0 } },
    { type: ColumnType.Json, unsigned: false, value: '{"k":[1,2]}' },
    { type: ColumnType.Enum, unsigned: false, value: 'red' },
    { type: ColumnType.Set, unsigned: false, value: 'a,b' },
  ];

  it('round-trips every binary parameter type, fed every way', () => {
    const w = new PacketWriter();
    encodeStmtExecute(w, { statementId: 3, params: every }, P41);
    const [exec] = decodeEveryWay(w.flush(), (p) => decodeStmtExecute(p.payload, { paramCount: every.length, capabilities: P41 }));
    expect(exec).toEqual<StmtExecute>({
      kind: 'stmt-execute',
      statementId: 3,
      flags: 0,
      iterationCount: 1,
      newParamsBound: true,
      parameterTypes: every.map(({ type, unsigned }) => ({ type, unsigned })),
      params: every.map((p) => p.value),
      longDataParams: [],
      attributes: [],
    });
  });

  it('refuses INT24, YEAR, BIT and GEOMETRY as parameter types, decoding and encoding', () => {
    // MariaDB binds these as NULL and reads no bytes (see test/mariadb-client.test.ts), MySQL reads
    // a length-encoded string: the backend's view is unknowable, so the codec fails closed.
    for (const type of [ColumnType.Int24, ColumnType.Year, ColumnType.Bit, ColumnType.Geometry, ColumnType.DateTime2]) {
      expect(thrownCode(() => decodeStmtExecute(hex(`17 01000000 00 01000000 00 01 ${type.toString(16).padStart(2, '0')}00 01000000`), { paramCount: 1, capabilities: P41 }))).toBe(
        'DBP_ERR_MYSQL_UNSUPPORTED_TYPE',
      );
      expect(thrownCode(() => encodeStmtExecute(new PacketWriter(), { statementId: 1, params: [{ type, unsigned: false, value: 1 }] }, P41))).toBe('DBP_ERR_MYSQL_UNSUPPORTED_TYPE');
    }
  });

  it('infers types for bare values the way a client without hints binds them', () => {
    const w = new PacketWriter();
    const values: MysqlValue[] = [1, 'x', null, Buffer.from('b'), 2n ** 64n - 1n, 1.25];
    encodeStmtExecute(w, { statementId: 1, params: values }, P41);
    const exec = decodeStmtExecute(w.flush().subarray(4), { paramCount: values.length, capabilities: P41 });
    expect(exec.params).toEqual([1n, 'x', null, Buffer.from('b'), 2n ** 64n - 1n, 1.25]);
    expect(exec.parameterTypes.map((t) => t.type)).toEqual([ColumnType.LongLong, ColumnType.VarString, ColumnType.Null, ColumnType.Blob, ColumnType.LongLong, ColumnType.Double]);
  });

  it('reuses the previously bound types when the new-params-bound flag is 0', () => {
    const w = new PacketWriter();
    const types = [
      { type: ColumnType.Long, unsigned: false },
      { type: ColumnType.VarString, unsigned: false },
    ];
    encodeStmtExecute(w, { statementId: 1, params: [{ ...types[0], value: 5 }, { ...types[1], value: 'again' }], sendTypes: false }, P41);
    const payload = w.flush().subarray(4);
    const exec = decodeStmtExecute(payload, { paramCount: 2, capabilities: P41, previousTypes: types });
    expect(exec.newParamsBound).toBe(false);
    expect(exec.params).toEqual([5, 'again']);
    expect(thrownCode(() => decodeStmtExecute(payload, { paramCount: 2, capabilities: P41 }))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });

  it('decodes only the first valueCount values, keeping every parameter type', () => {
    const w = new PacketWriter();
    encodeStmtExecute(w, { statementId: 1, params: every }, P41);
    const payload = w.flush().subarray(4);
    const exec = decodeStmtExecute(payload, { paramCount: every.length, capabilities: P41, valueCount: 3 });
    expect(exec.params).toEqual(every.slice(0, 3).map((p) => p.value));
    expect(exec.parameterTypes).toEqual(every.map(({ type, unsigned }) => ({ type, unsigned })));
    expect(exec.attributes).toEqual([]);
    expect(decodeStmtExecute(payload, { paramCount: every.length, capabilities: P41, valueCount: 0 }).params).toEqual([]);
  });

  it('skips values that came through COM_STMT_SEND_LONG_DATA', () => {
    const w = new PacketWriter();
    // Clients leave long-data parameters out of the values; write the block by hand accordingly.
    w.begin(0).u8(Command.StmtExecute).u32(1).u8(0).u32(1).u8(0).u8(1).u8(ColumnType.Blob).u8(0).u8(ColumnType.Long).u8(0).u32(99);
    w.end();
    const exec = decodeStmtExecute(w.flush().subarray(4), { paramCount: 2, capabilities: P41, longDataParams: new Set([0]) });
    expect(exec.params).toEqual([null, 99]);
    expect(exec.longDataParams).toEqual([0]);
  });

  it('reads the parameter count and names under CLIENT_QUERY_ATTRIBUTES (what mysql2 sends)', () => {
    const w = new PacketWriter();
    encodeStmtExecute(w, { statementId: 2, params: [42, 'x'], attributes: [{ name: 'traceparent', type: ColumnType.VarString, unsigned: false, value: 't' }] }, ATTRS);
    const exec = decodeStmtExecute(w.flush().subarray(4), { paramCount: 2, capabilities: ATTRS });
    expect(exec.flags).toBe(CursorType.ParameterCountAvailable);
    expect(exec.params).toEqual([42n, 'x']);
    expect(exec.attributes).toEqual([{ name: 'traceparent', type: ColumnType.VarString, unsigned: false, value: 't' }]);
  });

  it('handles statements without parameters', () => {
    const w = new PacketWriter();
    encodeStmtExecute(w, { statementId: 5, params: [] }, P41);
    expect(w.flush().subarray(4).toString('hex')).toBe('170500000000' + '01000000');
    expect(decodeStmtExecute(hex('17 05000000 00 01000000'), { paramCount: 0, capabilities: P41 }).params).toEqual([]);
  });

  it('rejects MariaDB parameter arrays and short parameter blocks with typed errors', () => {
    expect(thrownCode(() => decodeStmtExecute(hex('17 01000000 00 05000000 00 01 0300 01000000'), { paramCount: 1, capabilities: P41 }))).toBe('DBP_ERR_MYSQL_UNSUPPORTED');
    expect(thrownCode(() => decodeCommand(hex('17 01000000 00 02000000'), { capabilities: P41 }))).toBe('DBP_ERR_MYSQL_UNSUPPORTED');
    expect(thrownCode(() => decodeStmtExecute(hex('17 01000000 00 01000000 00 01 0300'), { paramCount: 1, capabilities: P41 }))).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
    expect(thrownCode(() => decodeStmtExecute(hex('17 01000000 08 01000000 01 00 01 0300 00 01000000'), { paramCount: 2, capabilities: ATTRS }))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => decodeStmtExecute(hex('17 01000000 00 01000000 00 02'), { paramCount: 1, capabilities: P41 }))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });

  it('decoders return or throw typed protocol errors on random and mutated input (property)', () => {
    const w = new PacketWriter();
    encodeStmtExecute(w, { statementId: 3, params: every }, ATTRS);
    const valid = w.flush().subarray(4);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(valid.length), fc.nat(valid.length), fc.integer({ min: 0, max: 255 }), (random, cut, at, byte) => {
        const bytes = Buffer.from(valid.subarray(0, cut));
        if (at < bytes.length) bytes[at] = byte;
        for (const caps of [P41, ATTRS]) {
          returnsOrThrowsProtocolError(() => decodeStmtExecute(bytes, { paramCount: every.length, capabilities: caps }));
          returnsOrThrowsProtocolError(() => decodeCommand(bytes, { capabilities: caps }));
          returnsOrThrowsProtocolError(() => decodeCommand(Buffer.from(random), { capabilities: caps }));
          returnsOrThrowsProtocolError(() => decodeStmtExecute(Buffer.concat([Buffer.of(0x17), Buffer.from(random)]), { paramCount: random.length % 5, capabilities: caps }));
        }
      }),
    );
  });
});

describe('COM_STMT_PREPARE response', () => {
  it('decodes the documented OK and encodes a full response with and without EOF packets', () => {
    expect(decodeStmtPrepareOk(hex('00 01000000 0100 0200 00 0000'))).toEqual({ kind: 'stmt-prepare-ok', statementId: 1, columnCount: 1, paramCount: 2, warnings: 0, metadataFollows: true });
    expect(decodeStmtPrepareOk(hex('00 01000000 0100 0200 00 0000 00')).metadataFollows).toBe(false);
    for (const caps of [P41, P41 | Capability.DeprecateEof]) {
      const w = new PacketWriter();
      const p = columnDefinition({ name: '?', type: ColumnType.VarString });
      const c = columnDefinition({ name: 'id', type: ColumnType.LongLong });
      const next = encodeStmtPrepareResponse(w, 1, { statementId: 9, params: [p, p], columns: [c], warnings: 1 }, caps);
      const packets = decodeEveryWay(w.flush(), (pk) => pk.payload);
      const eof = (caps & Capability.DeprecateEof) === 0;
      expect(packets).toHaveLength(eof ? 6 : 4);
      expect(next).toBe(packets.length + 1);
      expect(decodeStmtPrepareOk(packets[0])).toMatchObject({ statementId: 9, paramCount: 2, columnCount: 1, warnings: 1 });
      expect(decodeColumnDefinition(packets[eof ? 4 : 3]).name).toBe('id');
      if (eof) expect(decodeEof(packets[3]).kind).toBe('eof');
    }
  });
});
