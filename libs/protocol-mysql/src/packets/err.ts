// ERR packet: error number, optional SQLSTATE behind the '#' marker, message; MariaDB progress reports.
import { Capability, hasFlag } from '../capabilities';
import { PacketReader, type PacketWriter } from '../cursor';
import { MalformedPacket } from '../errors';
import { PacketHeader } from './headers';

const SQLSTATE_MARKER = 0x23; // '#'
/** MariaDB sends progress reports as ERR packets with this error number. */
export const PROGRESS_REPORT_ERRNO = 0xffff;

export interface ErrPacket {
  readonly kind: 'err';
  readonly code: number;
  /** Five characters, or null when the server sent none (pre-4.1 or early handshake errors). */
  readonly sqlState: string | null;
  readonly message: string;
}

export interface MariaDbProgressReport {
  readonly kind: 'progress';
  readonly stage: number;
  readonly maxStage: number;
  /** Progress in thousandths of a percent (0..100000). */
  readonly progress: number;
  readonly info: string;
}

export function decodeErr(payload: Buffer): ErrPacket {
  const r = new PacketReader(payload);
  const header = r.u8('ERR header');
  if (header !== PacketHeader.Err) throw MalformedPacket(`ERR packet header 0x${header.toString(16)}`);
  const code = r.u16('error code');
  let sqlState: string | null = null;
  if (!r.atEnd() && r.peek() === SQLSTATE_MARKER) {
    r.skip(1);
    sqlState = r.bytes(5, 'SQLSTATE').toString('latin1');
  }
  return { kind: 'err', code, sqlState, message: r.restString() };
}

/** True for a MariaDB progress report (only sent to clients that asked with MARIADB_CLIENT_PROGRESS). */
export function isProgressReport(payload: Buffer): boolean {
  return payload.length >= 3 && payload[0] === PacketHeader.Err && payload.readUInt16LE(1) === PROGRESS_REPORT_ERRNO;
}

export function decodeProgressReport(payload: Buffer): MariaDbProgressReport {
  const r = new PacketReader(payload, 3);
  r.skip(1, 'progress report count');
  const stage = r.u8('stage');
  const maxStage = r.u8('max stage');
  const progress = r.u24('progress');
  return { kind: 'progress', stage, maxStage, progress, info: r.lenencString('progress info') };
}

export interface ErrFields {
  readonly code: number;
  readonly sqlState?: string;
  readonly message: string;
}

/** Writes one framed ERR packet; the SQLSTATE defaults to HY000. Returns the next sequence id. */
export function encodeErr(w: PacketWriter, sequenceId: number, err: ErrFields, capabilities: number): number {
  w.begin(sequenceId).u8(PacketHeader.Err).u16(err.code);
  if (hasFlag(capabilities, Capability.Protocol41)) {
    const state = (err.sqlState ?? 'HY000').padEnd(5, '0').slice(0, 5);
    w.u8(SQLSTATE_MARKER).string(state, 'latin1');
  }
  w.string(err.message);
  return w.end();
}
