// OK packet: affected rows, insert id, status flags, warnings, info and session-state changes.
import { Capability, hasFlag, ServerStatus } from '../capabilities';
import { PacketReader, type PacketWriter } from '../cursor';
import { MalformedPacket } from '../errors';
import { PacketHeader } from './headers';
import { decodeSessionState, encodeSessionState, type SessionStateChange } from './session-state';

export interface OkPacket {
  readonly kind: 'ok';
  readonly affectedRows: bigint;
  readonly lastInsertId: bigint;
  readonly statusFlags: number;
  readonly warnings: number;
  readonly info: string;
  readonly sessionState: readonly SessionStateChange[];
}

/** What an encoder needs; everything defaults to zero/empty. */
export interface OkFields {
  readonly affectedRows?: bigint | number;
  readonly lastInsertId?: bigint | number;
  readonly statusFlags?: number;
  readonly warnings?: number;
  readonly info?: string;
  readonly sessionState?: readonly SessionStateChange[];
}

/** Decodes an OK packet (0x00 header, or 0xFE when it ends a result set under CLIENT_DEPRECATE_EOF). */
export function decodeOk(payload: Buffer, capabilities: number): OkPacket {
  const r = new PacketReader(payload);
  const header = r.u8('OK header');
  if (header !== PacketHeader.Ok && header !== PacketHeader.Eof) throw MalformedPacket(`OK packet header 0x${header.toString(16)}`);
  const affectedRows = notNull(r.lenencBig('affected rows'), 'affected rows');
  const lastInsertId = notNull(r.lenencBig('last insert id'), 'last insert id');
  let statusFlags = 0;
  let warnings = 0;
  if (hasFlag(capabilities, Capability.Protocol41)) {
    statusFlags = r.u16('status flags');
    warnings = r.u16('warnings');
  } else if (hasFlag(capabilities, Capability.Transactions)) {
    statusFlags = r.u16('status flags');
  }
  let info = '';
  let sessionState: SessionStateChange[] = [];
  if (hasFlag(capabilities, Capability.SessionTrack)) {
    if (!r.atEnd()) info = r.lenencString('info');
    if (hasFlag(statusFlags, ServerStatus.SessionStateChanged) && !r.atEnd()) {
      sessionState = decodeSessionState(r.lenencBytes('session state'));
    }
  } else {
    info = r.restString();
  }
  return { kind: 'ok', affectedRows, lastInsertId, statusFlags, warnings, info, sessionState };
}

function notNull(v: bigint | null, what: string): bigint {
  if (v === null) throw MalformedPacket(`${what} is NULL`);
  return v;
}

/** Writes an OK packet payload with the given header byte. */
export function writeOkPayload(w: PacketWriter, ok: OkFields, capabilities: number, header: number): void {
  const changes = ok.sessionState ?? [];
  const track = hasFlag(capabilities, Capability.SessionTrack);
  let statusFlags = ok.statusFlags ?? 0;
  if (track && changes.length > 0) statusFlags |= ServerStatus.SessionStateChanged;
  w.u8(header).lenenc(ok.affectedRows ?? 0).lenenc(ok.lastInsertId ?? 0);
  if (hasFlag(capabilities, Capability.Protocol41)) w.u16(statusFlags).u16(ok.warnings ?? 0);
  else if (hasFlag(capabilities, Capability.Transactions)) w.u16(statusFlags);
  if (!track) {
    w.string(ok.info ?? '');
    return;
  }
  const info = ok.info ?? '';
  if (info !== '' || (statusFlags & ServerStatus.SessionStateChanged) !== 0) w.lenencString(info);
  if ((statusFlags & ServerStatus.SessionStateChanged) !== 0) encodeSessionState(w, changes);
}

/** Writes one framed OK packet; returns the next sequence id. */
export function encodeOk(w: PacketWriter, sequenceId: number, ok: OkFields, capabilities: number): number {
  w.begin(sequenceId);
  writeOkPayload(w, ok, capabilities, PacketHeader.Ok);
  return w.end();
}
