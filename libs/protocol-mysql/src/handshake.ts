// Initial handshake (protocol v10): encoded by a server, decoded by a client.
import { Buffer } from 'node:buffer';
import { Capability, hasFlag } from './capabilities';
import { Collation } from './charsets';
import { PacketReader, type PacketWriter } from './cursor';
import { MalformedPacket, UnsupportedFeature } from './errors';

export const PROTOCOL_VERSION = 10;

export interface InitialHandshake {
  readonly serverVersion: string;
  readonly connectionId: number;
  /** Auth plugin data without the trailing NUL: the 20-byte scramble for the usual plugins. */
  readonly scramble: Buffer;
  /** Standard capability flags (unsigned 32-bit). */
  readonly capabilities: number;
  /** MariaDB extended capabilities; 0 when the server sets CLIENT_MYSQL (CLIENT_LONG_PASSWORD). */
  readonly mariaDbCapabilities: number;
  readonly characterSet: number;
  readonly statusFlags: number;
  /** Default auth plugin; empty when the server lacks CLIENT_PLUGIN_AUTH. */
  readonly authPlugin: string;
}

/** Decodes the server's first packet. An ERR sent instead (host blocked) must be checked for first. */
export function decodeInitialHandshake(payload: Buffer): InitialHandshake {
  const r = new PacketReader(payload);
  const version = r.u8('protocol version');
  if (version !== PROTOCOL_VERSION) throw UnsupportedFeature(`handshake protocol version ${version}`);
  const serverVersion = r.nulString('server version');
  const connectionId = r.u32('connection id');
  const part1 = r.bytes(8, 'auth plugin data part 1');
  r.skip(1);
  let capabilities = r.u16('capability flags');
  if (r.atEnd()) {
    return { serverVersion, connectionId, scramble: Buffer.from(part1), capabilities, mariaDbCapabilities: 0, characterSet: 0, statusFlags: 0, authPlugin: '' };
  }
  const characterSet = r.u8('character set');
  const statusFlags = r.u16('status flags');
  capabilities = (capabilities | (r.u16('capability flags upper') << 16)) >>> 0;
  const authDataLength = r.u8('auth plugin data length');
  r.skip(6, 'reserved');
  const mariaDbWord = r.u32('MariaDB capabilities');
  const mariaDbCapabilities = hasFlag(capabilities, Capability.LongPassword) ? 0 : mariaDbWord;
  let part2: Buffer = Buffer.alloc(0);
  if (hasFlag(capabilities, Capability.SecureConnection)) {
    part2 = r.bytes(Math.min(Math.max(13, authDataLength - 8), r.remaining), 'auth plugin data part 2');
  }
  const scramble = Buffer.concat([part1, part2[part2.length - 1] === 0 ? part2.subarray(0, part2.length - 1) : part2]);
  let authPlugin = '';
  if (hasFlag(capabilities, Capability.PluginAuth) && !r.atEnd()) {
    // Some servers (MySQL 5.5.7-5.5.9) omit the terminator: read to the end then.
    const rest = r.rest();
    const nul = rest.indexOf(0);
    authPlugin = (nul < 0 ? rest : rest.subarray(0, nul)).toString('utf8');
  }
  return { serverVersion, connectionId, scramble, capabilities, mariaDbCapabilities, characterSet, statusFlags, authPlugin };
}

export interface InitialHandshakeFields {
  readonly serverVersion: string;
  readonly connectionId: number;
  /** At least 8 bytes; 20 for mysql_native_password and caching_sha2_password. */
  readonly scramble: Buffer;
  readonly capabilities: number;
  readonly mariaDbCapabilities?: number;
  readonly characterSet?: number;
  readonly statusFlags?: number;
  readonly authPlugin: string;
}

/** Writes the initial handshake (sequence id 0); returns the next sequence id. */
export function encodeInitialHandshake(w: PacketWriter, hs: InitialHandshakeFields): number {
  if (hs.scramble.length < 8) throw MalformedPacket('scramble shorter than 8 bytes');
  const caps = hs.capabilities >>> 0;
  const pluginAuth = hasFlag(caps, Capability.PluginAuth);
  w.begin(0).u8(PROTOCOL_VERSION).nulString(hs.serverVersion).u32(hs.connectionId);
  w.bytes(hs.scramble.subarray(0, 8)).u8(0).u16(caps & 0xffff);
  w.u8(hs.characterSet ?? Collation.utf8mb4_general_ci).u16(hs.statusFlags ?? 0).u16(caps >>> 16);
  w.u8(pluginAuth ? hs.scramble.length + 1 : 0).zeros(6);
  w.u32(hasFlag(caps, Capability.LongPassword) ? 0 : (hs.mariaDbCapabilities ?? 0));
  if (hasFlag(caps, Capability.SecureConnection)) {
    const part2 = hs.scramble.subarray(8);
    w.bytes(part2).zeros(Math.max(13 - part2.length, 1));
  }
  if (pluginAuth) w.nulString(hs.authPlugin);
  return w.end();
}
