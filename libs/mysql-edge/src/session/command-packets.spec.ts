// Client executes forwarded with the backend statement id patched in place, and the parameter
// types added when the client relies on types that backend statement never saw.
import { Capability, ColumnType, PacketFramer, PacketWriter, decodeStmtExecute, encodeStmtExecute, type MysqlPacket } from '@dbproxy/protocol-mysql';
import type { BackendStatement, CatalogEntry } from '../backend/statement-catalog';
import { executeFor, longDataPacket, noteExecuteTypes, statementPacket } from './command-packets';
import type { ClientStatement } from './statement-registry';

const CAPS = Capability.Protocol41;

function packetOf(bytes: Buffer): MysqlPacket {
  let packet: MysqlPacket | undefined;
  new PacketFramer().feed(bytes, (p) => void (packet = p));
  return packet as MysqlPacket;
}

function execute(statementId: number, params: number[], sendTypes: boolean): MysqlPacket {
  const w = new PacketWriter();
  encodeStmtExecute(w, { statementId, params: params.map((value) => ({ type: ColumnType.LongLong, unsigned: false, value: BigInt(value) })), sendTypes }, CAPS);
  return packetOf(w.flush());
}

function statement(paramCount: number): ClientStatement {
  const entry: CatalogEntry = { key: 'SELECT ?', sql: Buffer.from('SELECT ?'), schema: null, refs: 1, closed: false, hosts: new Set() };
  return { id: 1, entry, paramCount, prepared: undefined as never, fixedRoute: null, types: null, previousTypes: null, previousTypesOf: null, longData: null, longDataParams: null, longDataError: null, bytes: 8 };
}

describe('executeFor', () => {
  it('patches the statement id and forwards the client bytes when types were sent', () => {
    const s = statement(1);
    const packet = execute(1, [5], true);
    expect(noteExecuteTypes(packet.payload, s)).toBe(true);
    const bs: BackendStatement = { id: 99, paramCount: 1, entry: s.entry, types: null };
    const out = executeFor(packet, s, bs);
    expect(out).toBe(packet.wire);
    expect(decodeStmtExecute(packetOf(out).payload, { paramCount: 1, capabilities: CAPS })).toMatchObject({ statementId: 99, params: [5n] });
    expect(bs.types).toBe(s.types);
  });

  it('adds the types when the client omits them and this backend statement never saw them', () => {
    const s = statement(1);
    noteExecuteTypes(execute(1, [5], true).payload, s);
    const bare = execute(1, [6], false);
    expect(noteExecuteTypes(bare.payload, s)).toBe(true);
    const fresh: BackendStatement = { id: 42, paramCount: 1, entry: s.entry, types: null };
    const out = executeFor(bare, s, fresh);
    expect(out).not.toBe(bare.wire);
    expect(decodeStmtExecute(packetOf(out).payload, { paramCount: 1, capabilities: CAPS })).toMatchObject({ statementId: 42, newParamsBound: true, params: [6n] });
    // the next bare execute on the same backend statement is forwarded as it is
    const next = execute(1, [7], false);
    expect(executeFor(next, s, fresh)).toBe(next.wire);
  });

  it('refuses an execute that never bound types', () => {
    expect(noteExecuteTypes(execute(1, [1], false).payload, statement(1))).toBe(false);
  });

  it('frames statement commands and long data', () => {
    expect(statementPacket(0x19, 258)).toEqual(Buffer.from([5, 0, 0, 0, 0x19, 2, 1, 0, 0]));
    const payload = Buffer.from([0x18, 1, 0, 0, 0, 0, 0, 0x61]);
    expect(longDataPacket(payload, 7)).toEqual(Buffer.from([8, 0, 0, 0, 0x18, 7, 0, 0, 0, 0, 0, 0x61]));
  });
});
