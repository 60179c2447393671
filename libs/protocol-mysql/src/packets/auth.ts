// Authentication-phase packets: AuthSwitchRequest, AuthMoreData, and the server reply union.
import { Buffer } from 'node:buffer';
import type { PacketWriter } from '../cursor';
import { PacketReader } from '../cursor';
import { MalformedPacket } from '../errors';
import { decodeErr, type ErrPacket } from './err';
import { PacketHeader } from './headers';
import { decodeOk, type OkPacket } from './ok';

export interface AuthSwitchRequest {
  readonly kind: 'auth-switch';
  readonly plugin: string;
  /** Plugin data as sent (MySQL sends the 20-byte scramble plus a NUL). */
  readonly data: Buffer;
}

export interface AuthMoreData {
  readonly kind: 'auth-more-data';
  readonly data: Buffer;
}

/** What a server can send during authentication. */
export type ServerAuthReply = OkPacket | ErrPacket | AuthSwitchRequest | AuthMoreData;

export function decodeAuthSwitchRequest(payload: Buffer): AuthSwitchRequest {
  const r = new PacketReader(payload);
  if (r.u8('auth switch header') !== PacketHeader.Eof) throw MalformedPacket('not an AuthSwitchRequest');
  // A bare 0xFE is the pre-4.1 "old authentication method switch".
  if (r.atEnd()) return { kind: 'auth-switch', plugin: 'mysql_old_password', data: Buffer.alloc(0) };
  const plugin = r.nulString('auth plugin name');
  return { kind: 'auth-switch', plugin, data: r.rest() };
}

export function decodeAuthMoreData(payload: Buffer): AuthMoreData {
  const r = new PacketReader(payload);
  if (r.u8('auth more data header') !== PacketHeader.AuthMoreData) throw MalformedPacket('not an AuthMoreData packet');
  return { kind: 'auth-more-data', data: r.rest() };
}

/** Classifies and decodes a server packet of the authentication phase. */
export function decodeServerAuthReply(payload: Buffer, capabilities: number): ServerAuthReply {
  switch (payload[0]) {
    case PacketHeader.Ok:
      return decodeOk(payload, capabilities);
    case PacketHeader.Err:
      return decodeErr(payload);
    case PacketHeader.Eof:
      return decodeAuthSwitchRequest(payload);
    case PacketHeader.AuthMoreData:
      return decodeAuthMoreData(payload);
    default:
      throw MalformedPacket(`authentication reply starts with ${payload.length ? payload[0] : 'nothing'}`);
  }
}

/** The scramble inside plugin data: the trailing NUL MySQL appends is dropped. */
export function scrambleFromPluginData(data: Buffer): Buffer {
  return data.length > 0 && data[data.length - 1] === 0 ? data.subarray(0, data.length - 1) : data;
}

export function encodeAuthSwitchRequest(w: PacketWriter, sequenceId: number, plugin: string, data: Uint8Array): number {
  w.begin(sequenceId).u8(PacketHeader.Eof).nulString(plugin).bytes(data);
  return w.end();
}

export function encodeAuthMoreData(w: PacketWriter, sequenceId: number, data: Uint8Array): number {
  w.begin(sequenceId).u8(PacketHeader.AuthMoreData).bytes(data);
  return w.end();
}

/** AuthSwitchResponse and the other client auth packets are the raw plugin data as the payload. */
export function encodeAuthData(w: PacketWriter, sequenceId: number, data: Uint8Array): number {
  w.begin(sequenceId).bytes(data);
  return w.end();
}
