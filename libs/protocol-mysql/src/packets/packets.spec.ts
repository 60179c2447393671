import fc from 'fast-check';
import { Capability, ServerStatus } from '../capabilities';
import { PacketWriter } from '../cursor';
import { decodeEveryWay, returnsOrThrowsProtocolError, thrownCode } from '../testing';
import { decodeAuthMoreData, decodeAuthSwitchRequest, decodeServerAuthReply, encodeAuthMoreData, encodeAuthSwitchRequest, scrambleFromPluginData } from './auth';
import { decodeEof, encodeEof, encodeResultSetEnd } from './eof';
import { decodeErr, decodeProgressReport, encodeErr, isProgressReport } from './err';
import { isEofPacket, isErrPacket, isOkPacket, isResultSetTerminator } from './headers';
import { decodeOk, encodeOk } from './ok';
import { decodeSessionState, encodeSessionState, type SessionStateChange } from './session-state';

const P41 = Capability.Protocol41 | Capability.Transactions;
const TRACK = P41 | Capability.SessionTrack;
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('OK packet', () => {
  it('decodes the documented example (status AUTOCOMMIT, no info)', () => {
    const ok = decodeOk(hex('00 00 00 02 00 00 00'), P41);
    expect(ok).toEqual({ kind: 'ok', affectedRows: 0n, lastInsertId: 0n, statusFlags: ServerStatus.Autocommit, warnings: 0, info: '', sessionState: [] });
  });

  it('decodes 8-byte affected rows and insert ids as bigint', () => {
    const ok = decodeOk(hex('00 fe ffffffffffffffff fc 0001 0000 0100'), P41);
    expect(ok.affectedRows).toBe(0xffffffffffffffffn);
    expect(ok.lastInsertId).toBe(256n);
    expect(ok.warnings).toBe(1);
  });

  it('reads info as the rest of the packet without CLIENT_SESSION_TRACK', () => {
    const ok = decodeOk(Buffer.concat([hex('00 01 00 0200 0000'), Buffer.from('Rows matched: 1  Changed: 1  Warnings: 0')]), P41);
    expect(ok.info).toBe('Rows matched: 1  Changed: 1  Warnings: 0');
  });

  it('decodes a schema change tracked in session state', () => {
    const ok = decodeOk(hex('00 00 00 0240 0000 00 07 01 05 04 74657374'), TRACK);
    expect(ok.statusFlags).toBe(ServerStatus.Autocommit | ServerStatus.SessionStateChanged);
    expect(ok.sessionState).toEqual([{ type: 'schema', schema: 'test' }]);
  });

  it('round-trips every session-state record type through encode and decode', () => {
    const changes: SessionStateChange[] = [
      { type: 'system-variable', name: 'autocommit', value: 'OFF' },
      { type: 'schema', schema: 'shop' },
      { type: 'state-change', changed: true },
      { type: 'gtids', encoding: 0, gtids: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5' },
      { type: 'transaction-characteristics', characteristics: 'START TRANSACTION READ ONLY;' },
      { type: 'transaction-state', state: 'T_______' },
      { type: 'unknown', code: 0x2a, data: Buffer.from('xyz') },
    ];
    const w = new PacketWriter();
    encodeOk(w, 1, { affectedRows: 3, lastInsertId: 42n, statusFlags: ServerStatus.InTrans, warnings: 2, info: 'done', sessionState: changes }, TRACK);
    const [ok] = decodeEveryWay(w.flush(), (p) => decodeOk(p.payload, TRACK));
    expect(ok).toEqual({
      kind: 'ok',
      affectedRows: 3n,
      lastInsertId: 42n,
      statusFlags: ServerStatus.InTrans | ServerStatus.SessionStateChanged,
      warnings: 2,
      info: 'done',
      sessionState: changes,
    });
  });

  it('splits MariaDB records packing several system variables', () => {
    const block = hex('00 14 0a 6175746f636f6d6d6974 02 4f4e 03 666f6f 01 31');
    expect(decodeSessionState(block)).toEqual([
      { type: 'system-variable', name: 'autocommit', value: 'ON' },
      { type: 'system-variable', name: 'foo', value: '1' },
    ]);
  });

  it('encodes the session-state block with its length prefix', () => {
    const w = new PacketWriter();
    w.begin(0);
    encodeSessionState(w, [{ type: 'schema', schema: 'test' }]);
    w.end();
    expect(w.flush().subarray(4).toString('hex')).toBe('07010504' + Buffer.from('test').toString('hex'));
  });
});

describe('ERR packet', () => {
  it('decodes the documented example with SQLSTATE', () => {
    const err = decodeErr(Buffer.concat([hex('ff 4804 23 4859303030'), Buffer.from('No tables used')]));
    expect(err).toEqual({ kind: 'err', code: 1096, sqlState: 'HY000', message: 'No tables used' });
  });

  it('decodes an ERR without the SQLSTATE marker (early handshake errors)', () => {
    const err = decodeErr(Buffer.concat([hex('ff 6904'), Buffer.from("Host 'x' is blocked")]));
    expect(err).toEqual({ kind: 'err', code: 1129, sqlState: null, message: "Host 'x' is blocked" });
  });

  it('encodes with and without PROTOCOL_41', () => {
    const w = new PacketWriter();
    encodeErr(w, 2, { code: 1045, sqlState: '28000', message: 'Access denied' }, P41);
    encodeErr(w, 0, { code: 1045, message: 'no state' }, 0);
    const [a, b] = decodeEveryWay(w.flush(), (p) => [p.sequenceId, decodeErr(p.payload)]);
    expect(a).toEqual([2, { kind: 'err', code: 1045, sqlState: '28000', message: 'Access denied' }]);
    expect(b).toEqual([0, { kind: 'err', code: 1045, sqlState: null, message: 'no state' }]);
  });

  it('recognises and decodes MariaDB progress reports', () => {
    const p = Buffer.concat([hex('ff ffff 01 02 03 a08601'), hex('0b'), Buffer.from('copy to tmp')]);
    expect(isProgressReport(p)).toBe(true);
    expect(decodeProgressReport(p)).toEqual({ kind: 'progress', stage: 2, maxStage: 3, progress: 100000, info: 'copy to tmp' });
  });
});

describe('EOF and result-set terminators', () => {
  it('decodes the documented EOF example', () => {
    expect(decodeEof(hex('fe 0000 0200'))).toEqual({ kind: 'eof', warnings: 0, statusFlags: 2 });
  });

  it('writes an EOF, or an OK with the 0xFE header under CLIENT_DEPRECATE_EOF', () => {
    const w = new PacketWriter();
    encodeResultSetEnd(w, 5, { statusFlags: ServerStatus.MoreResultsExists, warnings: 1 }, P41);
    encodeResultSetEnd(w, 6, { statusFlags: ServerStatus.Autocommit, warnings: 0 }, P41 | Capability.DeprecateEof);
    encodeEof(w, 7, {}, P41);
    const decoded = decodeEveryWay(w.flush(), (p, i) => {
      expect(isResultSetTerminator(p.payload, i === 1)).toBe(true);
      return i === 1 ? decodeOk(p.payload, P41).statusFlags : decodeEof(p.payload);
    });
    expect(decoded).toEqual([{ kind: 'eof', warnings: 1, statusFlags: ServerStatus.MoreResultsExists }, ServerStatus.Autocommit, { kind: 'eof', warnings: 0, statusFlags: 0 }]);
  });

  it('tells packets apart by header and length', () => {
    expect(isOkPacket(hex('00 00 00 0200 0000'))).toBe(true);
    expect(isOkPacket(hex('00 00'))).toBe(false);
    expect(isEofPacket(hex('fe 0000 0200'))).toBe(true);
    expect(isErrPacket(hex('ff 0000'))).toBe(true);
    // A 0xFE row holding a 16 MiB value is not a terminator.
    expect(isResultSetTerminator(Buffer.alloc(0xffffff, 0xfe), true)).toBe(false);
    expect(isResultSetTerminator(hex('fe 00 00 0200 0000 0123456789'), true)).toBe(true);
    expect(isResultSetTerminator(hex('fe 00 00 0200 0000 0123456789'), false)).toBe(false);
  });
});

describe('authentication packets', () => {
  const scramble = Buffer.from('0123456789abcdefghij');

  it('round-trips AuthSwitchRequest and AuthMoreData, several in one chunk', () => {
    const w = new PacketWriter();
    encodeAuthSwitchRequest(w, 2, 'caching_sha2_password', Buffer.concat([scramble, Buffer.of(0)]));
    encodeAuthMoreData(w, 4, Buffer.of(0x04));
    const [sw, more] = decodeEveryWay(w.flush(), (p) => decodeServerAuthReply(p.payload, P41));
    expect(sw).toEqual({ kind: 'auth-switch', plugin: 'caching_sha2_password', data: Buffer.concat([scramble, Buffer.of(0)]) });
    expect(more).toEqual({ kind: 'auth-more-data', data: Buffer.of(0x04) });
    if (sw.kind === 'auth-switch') expect(scrambleFromPluginData(sw.data)).toEqual(scramble);
  });

  it('reads the bare 0xFE old-password switch', () => {
    expect(decodeAuthSwitchRequest(hex('fe'))).toEqual({ kind: 'auth-switch', plugin: 'mysql_old_password', data: Buffer.alloc(0) });
  });

  it('classifies OK and ERR in the auth phase', () => {
    expect(decodeServerAuthReply(hex('00 00 00 0200 0000'), P41).kind).toBe('ok');
    expect(decodeServerAuthReply(hex('ff 1504 23 3238303030 78'), P41).kind).toBe('err');
    expect(thrownCode(() => decodeServerAuthReply(hex('07'), P41))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => decodeServerAuthReply(Buffer.alloc(0), P41))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => decodeAuthMoreData(hex('02')))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });
});

describe('generic packet decoders on malformed input (property)', () => {
  const decoders: [string, (b: Buffer) => unknown][] = [
    ['OK', (b) => decodeOk(b, TRACK)],
    ['OK without tracking', (b) => decodeOk(b, P41)],
    ['ERR', decodeErr],
    ['EOF', decodeEof],
    ['progress', decodeProgressReport],
    ['session state', decodeSessionState],
    ['auth reply', (b) => decodeServerAuthReply(b, TRACK)],
  ];

  it.each(decoders)('%s decoder returns or throws a typed protocol error', (_name, decode) => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 48 }), (bytes) => void returnsOrThrowsProtocolError(() => decode(Buffer.from(bytes)))));
  });

  it.each(decoders)('%s decoder survives truncation and byte flips of valid packets', (_name, decode) => {
    const w = new PacketWriter();
    encodeOk(w, 0, { affectedRows: 300, info: 'x', sessionState: [{ type: 'schema', schema: 'db' }, { type: 'system-variable', name: 'a', value: 'b' }] }, TRACK);
    const valid = w.flush().subarray(4);
    fc.assert(
      fc.property(fc.nat(valid.length), fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 }), (cut, at, byte) => {
        const bytes = Buffer.from(valid.subarray(0, cut));
        if (at < bytes.length) bytes[at] = byte;
        returnsOrThrowsProtocolError(() => decode(bytes));
      }),
    );
  });
});
