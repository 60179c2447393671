// Command packets the edge sends to backends on a session's behalf: replayed settings, lazy
// prepares, statement closes, long data, and client executes with their statement id patched in
// place (the client's bytes are forwarded, not rebuilt, unless parameter types must be added).
import { Buffer } from 'node:buffer';
import { Command, framePayload, type MysqlPacket } from '@dbproxy/protocol-mysql';
import type { BackendStatement } from '../backend/statement-catalog';
import type { ClientStatement } from './statement-registry';

/** A command packet (sequence 0) whose body is `length` bytes written by `write` at offset 5. */
function commandPacket(command: number, length: number, write: (buf: Buffer) => void): Buffer {
  const size = length + 1;
  const buf = Buffer.allocUnsafe(4 + size);
  buf.writeUIntLE(size & 0xffffff, 0, 3);
  buf[3] = 0;
  buf[4] = command;
  write(buf);
  return size < 0xffffff ? buf : framePayload(buf.subarray(4), 0);
}

export function initDbPacket(schema: string): Buffer {
  return commandPacket(Command.InitDb, Buffer.byteLength(schema, 'utf8'), (buf) => buf.write(schema, 5, 'utf8'));
}

/** COM_STMT_PREPARE with the client's statement bytes as they were sent (never decoded and re-encoded). */
export function preparePacket(sql: Buffer): Buffer {
  return commandPacket(Command.StmtPrepare, sql.length, (buf) => sql.copy(buf, 5));
}

/** COM_STMT_CLOSE / COM_STMT_RESET / COM_STMT_FETCH-style header with a statement id. */
export function statementPacket(command: number, statementId: number): Buffer {
  const buf = Buffer.allocUnsafe(9);
  buf.writeUIntLE(5, 0, 3);
  buf[3] = 0;
  buf[4] = command;
  buf.writeUInt32LE(statementId, 5);
  return buf;
}

/** A stored COM_STMT_SEND_LONG_DATA payload framed for the backend statement `id`. */
export function longDataPacket(payload: Buffer, id: number): Buffer {
  payload.writeUInt32LE(id, 1);
  return framePayload(payload, 0);
}

/** Writes `id` over the statement id of a client command (COM_STMT_EXECUTE/FETCH/RESET) and returns its wire bytes. */
export function withStatementId(packet: MysqlPacket, id: number): Buffer {
  packet.payload.writeUInt32LE(id, 1);
  if (packet.wireLength === packet.payloadLength + 4) return packet.wire;
  return framePayload(packet.payload, 0); // a multi-frame packet was assembled apart from its wire copy
}

/** Offset of the new-params-bound flag in a COM_STMT_EXECUTE payload with `n` parameters. */
function boundFlagAt(n: number): number {
  return 10 + ((n + 7) >> 3);
}

/**
 * Remembers the types a COM_STMT_EXECUTE binds. Returns false when it binds none and the client
 * never sent any (the execute cannot be served).
 */
export function noteExecuteTypes(payload: Buffer, statement: ClientStatement): boolean {
  const n = statement.paramCount;
  if (n === 0) return true;
  const at = boundFlagAt(n);
  if (payload.length <= at) return false;
  if (payload[at] !== 1) return statement.types !== null;
  if (!sameTypes(statement.types, payload, at + 1, 2 * n)) statement.types = Buffer.from(payload.subarray(at + 1, at + 1 + 2 * n));
  return true;
}

/** Whether `known` holds the `length` type bytes at `from` in `payload` (compared in place: this runs per execute). */
function sameTypes(known: Buffer | null, payload: Buffer, from: number, length: number): boolean {
  if (known === null || known.length !== length || payload.length < from + length) return false;
  for (let i = 0; i < length; i++) if (known[i] !== payload[from + i]) return false;
  return true;
}

/**
 * The execute for backend statement `bs`: the client's packet with the id patched, plus the
 * parameter types when the client relied on types this backend statement never saw.
 */
export function executeFor(packet: MysqlPacket, statement: ClientStatement, bs: BackendStatement): Buffer {
  const n = statement.paramCount;
  const payload = packet.payload;
  if (n === 0 || statement.types === null) return withStatementId(packet, bs.id);
  const at = boundFlagAt(n);
  const current = bs.types;
  const typesKnown = payload[at] === 1 || current === statement.types || (current !== null && current.equals(statement.types));
  bs.types = statement.types;
  if (typesKnown) return withStatementId(packet, bs.id);
  const rebuilt = Buffer.concat([payload.subarray(0, at), Buffer.of(1), statement.types, payload.subarray(at + 1)]);
  rebuilt.writeUInt32LE(bs.id, 1);
  return framePayload(rebuilt, 0);
}
