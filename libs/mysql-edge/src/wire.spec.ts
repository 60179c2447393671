// The edge's own replies decode as the codec (and so clients) read them.
import { Capability, decodeEof, decodeErr, decodeOk, ServerStatus, DEFAULT_SERVER_CAPABILITIES } from '@dbproxy/protocol-mysql';
import { eofPacket, errPacket, okPacket, sessionStatus } from './wire';

describe('wire replies', () => {
  it('encodes ERR with errno, SQLSTATE and message', () => {
    const buf = errPacket(3, { code: 1290, sqlState: 'HY000', message: 'read only ✓' }, Capability.Protocol41);
    expect(buf.readUIntLE(0, 3)).toBe(buf.length - 4);
    expect(buf[3]).toBe(3);
    expect(decodeErr(buf.subarray(4))).toEqual({ kind: 'err', code: 1290, sqlState: 'HY000', message: 'read only ✓' });
    // before capabilities are known (admission refusals) the SQLSTATE is included
    expect(decodeErr(errPacket(0, { code: 1040, sqlState: '08004', message: 'x' }, 0).subarray(4)).sqlState).toBe('08004');
  });

  it('encodes OK and EOF with status flags', () => {
    const caps = DEFAULT_SERVER_CAPABILITIES;
    const ok = okPacket(1, sessionStatus(true, true), caps);
    expect(decodeOk(ok.subarray(4), caps).statusFlags).toBe(ServerStatus.Autocommit | ServerStatus.InTrans);
    expect(okPacket(1, 2, caps)).toBe(okPacket(1, 2, caps));
    expect(decodeEof(eofPacket(1, 2, Capability.Protocol41).subarray(4))).toMatchObject({ statusFlags: 2 });
    expect(decodeOk(eofPacket(1, 2, caps).subarray(4), caps).statusFlags).toBe(2);
  });
});
