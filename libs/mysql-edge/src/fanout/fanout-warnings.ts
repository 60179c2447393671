// What a client sees of a failed copy: its OK packet's warning count raised by one per failure, and
// a row per failure in SHOW WARNINGS after the backend's own rows (the edge merges them into the
// backend's SHOW WARNINGS result). Level `Warning`, code 1296 (ER_GET_ERRMSG, "Got error %d '%s'
// from %s", the code MySQL uses for an error another engine or server returned).
import { PacketFramer, PacketWriter, encodeTextRow, type MysqlPacket } from '@dbproxy/protocol-mysql';
import type { CopyFailure } from './fanout-path';

export const FANOUT_WARNING_CODE = 1296;

export interface WarningRow {
  readonly level: 'Warning';
  readonly code: number;
  readonly message: string;
}

export function warningOf(f: CopyFailure): WarningRow {
  const backend = f.backend === null ? 'no usable primary' : `backend "${f.backend}"`;
  return { level: 'Warning', code: FANOUT_WARNING_CODE, message: `Got error ${f.code} '${f.message}' from fanout "${f.fanout}" copy to shard "${f.shard}" (${backend})` };
}

/** `SHOW WARNINGS` (with or without LIMIT) as the client's text, comments aside. */
export function isShowWarnings(sql: string): boolean {
  return /^\s*(?:\/\*[^]*?\*\/\s*)*show\s+warnings\b/i.test(sql);
}

function framesOf(response: Buffer): MysqlPacket[] {
  const packets: MysqlPacket[] = [];
  new PacketFramer({ maxPacketSize: Number.MAX_SAFE_INTEGER }).feed(response, (p) => void packets.push(p));
  return packets;
}

/**
 * Raises the warning count of the response's last packet (an OK, or the EOF/OK that ends a result
 * set) by `n`, in place; other bytes stay as the backend sent them.
 */
export function addWarnings(response: Buffer, n: number): void {
  let at = 0;
  let last = -1;
  while (at + 4 <= response.length) {
    last = at;
    at += 4 + response.readUIntLE(at, 3);
  }
  if (last < 0) return;
  const payload = response.subarray(last + 4, at);
  let field: number;
  if (payload[0] === 0xfe && payload.length < 9) field = 1; // EOF: header, warnings, status
  else if (payload[0] === 0x00 || payload[0] === 0xfe) field = 1 + lenencLength(payload, 1) + lenencLength(payload, 1 + lenencLength(payload, 1)) + 2;
  else return; // an ERR carries no count
  if (field + 2 > payload.length) return;
  payload.writeUInt16LE(Math.min(0xffff, payload.readUInt16LE(field) + n), field);
}

/** Bytes of the length-encoded integer at `at`. */
function lenencLength(buf: Buffer, at: number): number {
  const first = buf[at] ?? 0;
  return first < 0xfb ? 1 : first === 0xfc ? 3 : first === 0xfd ? 4 : first === 0xfe ? 9 : 1;
}

/**
 * The backend's SHOW WARNINGS result with the edge's rows added before its terminator, every packet
 * after the column definitions renumbered. An ERR (or anything that is not a result set) is
 * returned as it came.
 */
export function mergeWarnings(response: Buffer, rows: readonly WarningRow[]): Buffer {
  const packets = framesOf(response);
  const first = packets[0];
  const end = packets[packets.length - 1];
  if (first === undefined || end === undefined || packets.length < 2 || first.payload[0] === 0xff || first.payload[0] === 0x00) return response;
  const w = new PacketWriter(response.length + 256 * rows.length);
  let seq = first.sequenceId;
  for (let i = 0; i < packets.length - 1; i++) seq = w.begin(seq).bytes((packets[i] as MysqlPacket).payload).end();
  for (const row of rows) seq = encodeTextRow(w, seq, [row.level, String(row.code), row.message]);
  w.begin(seq).bytes(end.payload).end();
  return w.flush();
}
