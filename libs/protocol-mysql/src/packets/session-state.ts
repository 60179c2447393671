// Session-state change records carried by OK packets when CLIENT_SESSION_TRACK is negotiated.
import { Buffer } from 'node:buffer';
import type { PacketWriter } from '../cursor';
import { encodeLenenc, PacketReader } from '../cursor';

/** The type byte of each session-state record. */
export const SessionTrack = {
  SystemVariables: 0x00, // SESSION_TRACK_SYSTEM_VARIABLES
  Schema: 0x01, // SESSION_TRACK_SCHEMA
  StateChange: 0x02, // SESSION_TRACK_STATE_CHANGE
  Gtids: 0x03, // SESSION_TRACK_GTIDS
  TransactionCharacteristics: 0x04, // SESSION_TRACK_TRANSACTION_CHARACTERISTICS
  TransactionState: 0x05, // SESSION_TRACK_TRANSACTION_STATE
} as const;

export type SessionStateChange =
  | { readonly type: 'system-variable'; readonly name: string; readonly value: string }
  | { readonly type: 'schema'; readonly schema: string }
  | { readonly type: 'state-change'; readonly changed: boolean }
  | { readonly type: 'gtids'; readonly encoding: number; readonly gtids: string }
  | { readonly type: 'transaction-characteristics'; readonly characteristics: string }
  | { readonly type: 'transaction-state'; readonly state: string }
  | { readonly type: 'unknown'; readonly code: number; readonly data: Buffer };

/** Decodes the session-state block (the bytes inside its length prefix). */
export function decodeSessionState(block: Buffer): SessionStateChange[] {
  const r = new PacketReader(block);
  const changes: SessionStateChange[] = [];
  while (!r.atEnd()) {
    const type = r.u8('session state type');
    const data = r.lenencBytes('session state data');
    decodeRecord(type, data, changes);
  }
  return changes;
}

function decodeRecord(type: number, data: Buffer, out: SessionStateChange[]): void {
  const r = new PacketReader(data);
  switch (type) {
    case SessionTrack.SystemVariables:
      // MariaDB may pack several name/value pairs in one record.
      do out.push({ type: 'system-variable', name: r.lenencString('variable name'), value: r.lenencString('variable value') });
      while (!r.atEnd());
      return;
    case SessionTrack.Schema:
      out.push({ type: 'schema', schema: r.lenencString('schema') });
      return;
    case SessionTrack.StateChange:
      out.push({ type: 'state-change', changed: r.lenencString('state change') === '1' });
      return;
    case SessionTrack.Gtids:
      out.push({ type: 'gtids', encoding: r.u8('gtid encoding'), gtids: r.lenencString('gtids') });
      return;
    case SessionTrack.TransactionCharacteristics:
      out.push({ type: 'transaction-characteristics', characteristics: r.lenencString('characteristics') });
      return;
    case SessionTrack.TransactionState:
      out.push({ type: 'transaction-state', state: r.lenencString('transaction state') });
      return;
    default:
      out.push({ type: 'unknown', code: type, data });
  }
}

/** Writes the session-state block, length prefix included. */
export function encodeSessionState(w: PacketWriter, changes: readonly SessionStateChange[]): void {
  const records = changes.map(encodeRecord);
  let total = 0;
  for (const rec of records) total += rec.length;
  w.lenenc(total);
  for (const rec of records) w.bytes(rec);
}

function encodeRecord(change: SessionStateChange): Buffer {
  const [type, data] = recordData(change);
  const len = encodeLenenc(data.length);
  return Buffer.concat([Buffer.of(type), len, data]);
}

function recordData(change: SessionStateChange): [number, Buffer] {
  switch (change.type) {
    case 'system-variable':
      return [SessionTrack.SystemVariables, Buffer.concat([lenencStr(change.name), lenencStr(change.value)])];
    case 'schema':
      return [SessionTrack.Schema, lenencStr(change.schema)];
    case 'state-change':
      return [SessionTrack.StateChange, lenencStr(change.changed ? '1' : '0')];
    case 'gtids':
      return [SessionTrack.Gtids, Buffer.concat([Buffer.of(change.encoding), lenencStr(change.gtids)])];
    case 'transaction-characteristics':
      return [SessionTrack.TransactionCharacteristics, lenencStr(change.characteristics)];
    case 'transaction-state':
      return [SessionTrack.TransactionState, lenencStr(change.state)];
    case 'unknown':
      return [change.code, change.data];
  }
}

function lenencStr(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([encodeLenenc(b.length), b]);
}
