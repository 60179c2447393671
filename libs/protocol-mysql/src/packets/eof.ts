// EOF packet and the result-set terminator that replaces it under CLIENT_DEPRECATE_EOF.
import { Capability, hasFlag } from '../capabilities';
import { PacketReader, type PacketWriter } from '../cursor';
import { MalformedPacket } from '../errors';
import { PacketHeader } from './headers';
import { writeOkPayload, type OkFields } from './ok';

export interface EofPacket {
  readonly kind: 'eof';
  readonly warnings: number;
  readonly statusFlags: number;
}

export function decodeEof(payload: Buffer): EofPacket {
  const r = new PacketReader(payload);
  const header = r.u8('EOF header');
  if (header !== PacketHeader.Eof || payload.length >= 9) throw MalformedPacket('not an EOF packet');
  if (r.atEnd()) return { kind: 'eof', warnings: 0, statusFlags: 0 };
  const warnings = r.u16('warnings');
  return { kind: 'eof', warnings, statusFlags: r.u16('status flags') };
}

/** Writes a legacy EOF packet; returns the next sequence id. */
export function encodeEof(w: PacketWriter, sequenceId: number, eof: { warnings?: number; statusFlags?: number }, capabilities: number): number {
  w.begin(sequenceId).u8(PacketHeader.Eof);
  if (hasFlag(capabilities, Capability.Protocol41)) w.u16(eof.warnings ?? 0).u16(eof.statusFlags ?? 0);
  return w.end();
}

/**
 * Writes what ends a row stream: an OK packet with the 0xFE header under CLIENT_DEPRECATE_EOF,
 * else an EOF packet. Returns the next sequence id.
 */
export function encodeResultSetEnd(w: PacketWriter, sequenceId: number, end: OkFields, capabilities: number): number {
  if (!hasFlag(capabilities, Capability.DeprecateEof)) return encodeEof(w, sequenceId, end, capabilities);
  w.begin(sequenceId);
  writeOkPayload(w, end, capabilities, PacketHeader.Eof);
  return w.end();
}
