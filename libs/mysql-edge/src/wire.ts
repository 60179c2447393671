// Small frontend replies built straight into exact-size buffers: OK, EOF and ERR packets the edge
// answers itself (ping, reset, local errors). Cached where the bytes never change.
import { Buffer } from 'node:buffer';
import { Capability, hasFlag, ServerStatus } from '@dbproxy/protocol-mysql';
import type { MysqlError } from './errors';

const HEADER = 4;

/** Writes the 4-byte frame header for a payload of `length` bytes. */
function header(buf: Buffer, length: number, seq: number): void {
  buf.writeUIntLE(length, 0, 3);
  buf[3] = seq & 0xff;
}

const okCache = new Map<number, Buffer>();

/** An OK packet (affected rows 0, insert id 0, no info) with the given status flags. */
export function okPacket(seq: number, statusFlags: number, capabilities: number): Buffer {
  const key = ((seq & 0xff) << 16) | (statusFlags & 0xffff) | (hasFlag(capabilities, Capability.Protocol41) ? 1 << 24 : 0);
  let cached = okCache.get(key);
  if (cached === undefined) {
    const p41 = hasFlag(capabilities, Capability.Protocol41);
    const payload = p41 ? 7 : 5;
    cached = Buffer.alloc(HEADER + payload);
    header(cached, payload, seq);
    cached.writeUInt16LE(statusFlags & 0xffff, HEADER + 3);
    if (okCache.size < 1024) okCache.set(key, cached);
  }
  return cached;
}

/** A legacy EOF packet (COM_SET_OPTION's answer). */
export function eofPacket(seq: number, statusFlags: number, capabilities: number): Buffer {
  if (hasFlag(capabilities, Capability.DeprecateEof)) {
    const buf = Buffer.alloc(HEADER + 7);
    header(buf, 7, seq);
    buf[HEADER] = 0xfe;
    buf.writeUInt16LE(statusFlags & 0xffff, HEADER + 3);
    return buf;
  }
  const buf = Buffer.alloc(HEADER + 5);
  header(buf, 5, seq);
  buf[HEADER] = 0xfe;
  buf.writeUInt16LE(statusFlags & 0xffff, HEADER + 3);
  return buf;
}

/** An ERR packet with errno, SQLSTATE (under CLIENT_PROTOCOL_41) and message. */
export function errPacket(seq: number, err: MysqlError, capabilities: number): Buffer {
  const p41 = hasFlag(capabilities, Capability.Protocol41) || capabilities === 0;
  const message = Buffer.from(err.message, 'utf8');
  const payload = 3 + (p41 ? 6 : 0) + message.length;
  const buf = Buffer.allocUnsafe(HEADER + payload);
  header(buf, payload, seq);
  buf[HEADER] = 0xff;
  buf.writeUInt16LE(err.code, HEADER + 1);
  let at = HEADER + 3;
  if (p41) {
    buf[at++] = 0x23; // '#'
    at += buf.write(err.sqlState.padEnd(5, '0').slice(0, 5), at, 5, 'latin1');
  }
  message.copy(buf, at);
  return buf;
}

/** Status flags of an idle session: autocommit as the session has it, IN_TRANS when pinned in a transaction. */
export function sessionStatus(autocommit: boolean, inTransaction: boolean): number {
  return (autocommit ? ServerStatus.Autocommit : 0) | (inTransaction ? ServerStatus.InTrans : 0);
}
