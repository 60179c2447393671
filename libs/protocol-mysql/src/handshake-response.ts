// HandshakeResponse41 and SSLRequest: decoded by a server, encoded by a client.
import { Buffer } from 'node:buffer';
import { Capability, hasFlag } from './capabilities';
import { encodingForCollation } from './charsets';
import { encodeLenenc, PacketReader, type PacketWriter } from './cursor';
import { MalformedPacket, UnsupportedFeature } from './errors';

const FILLER_BYTES = 19; // then 4 bytes of MariaDB extended capabilities (zero for MySQL)
/** An SSLRequest is exactly the 32-byte fixed prefix of a HandshakeResponse41. */
export const SSL_REQUEST_LENGTH = 32;

interface ClientHelloFields {
  readonly capabilities: number;
  readonly maxPacketSize: number;
  readonly characterSet: number;
  /** MariaDB extended capabilities; 0 when the client sets CLIENT_MYSQL (CLIENT_LONG_PASSWORD). */
  readonly mariaDbCapabilities: number;
}

export interface SslRequest extends ClientHelloFields {
  readonly kind: 'ssl-request';
}

export interface HandshakeResponse extends ClientHelloFields {
  readonly kind: 'handshake-response';
  readonly username: string;
  readonly authResponse: Buffer;
  /** Set when the client sent CLIENT_CONNECT_WITH_DB. */
  readonly database: string | null;
  /** Set when the client sent CLIENT_PLUGIN_AUTH. */
  readonly authPlugin: string | null;
  /** Set when the client sent CLIENT_CONNECT_ATTRS. */
  readonly connectAttributes: ReadonlyMap<string, string> | null;
  /** Set when the client sent CLIENT_ZSTD_COMPRESSION_ALGORITHM. */
  readonly zstdCompressionLevel: number | null;
}

/** Decodes the client's reply to the initial handshake: an SSLRequest or a HandshakeResponse41. */
export function decodeClientHandshake(payload: Buffer): SslRequest | HandshakeResponse {
  const r = new PacketReader(payload);
  const capabilities = r.u32('client capabilities');
  if (!hasFlag(capabilities, Capability.Protocol41)) throw UnsupportedFeature('HandshakeResponse320 (client without CLIENT_PROTOCOL_41)');
  const maxPacketSize = r.u32('max packet size');
  const characterSet = r.u8('character set');
  r.skip(FILLER_BYTES);
  const extended = r.u32('MariaDB capabilities');
  const fields = {
    capabilities,
    maxPacketSize,
    characterSet,
    mariaDbCapabilities: hasFlag(capabilities, Capability.LongPassword) ? 0 : extended,
  };
  if (r.atEnd() && hasFlag(capabilities, Capability.Ssl)) return { kind: 'ssl-request', ...fields };
  return decodeResponseBody(r, fields);
}

function decodeResponseBody(r: PacketReader, fields: ClientHelloFields): HandshakeResponse {
  const caps = fields.capabilities;
  const encoding = encodingForCollation(fields.characterSet);
  const username = r.nulString('username', encoding);
  let authResponse: Buffer;
  if (hasFlag(caps, Capability.PluginAuthLenencClientData)) authResponse = r.lenencBytes('auth response');
  else if (hasFlag(caps, Capability.SecureConnection)) authResponse = r.bytes(r.u8('auth response length'), 'auth response');
  else authResponse = r.nulBytes('auth response');
  const database = hasFlag(caps, Capability.ConnectWithDb) && !r.atEnd() ? r.nulString('database', encoding) : null;
  const authPlugin = hasFlag(caps, Capability.PluginAuth) && !r.atEnd() ? r.nulString('auth plugin name') : null;
  const connectAttributes = hasFlag(caps, Capability.ConnectAttrs) && !r.atEnd() ? decodeAttributes(r.lenencBytes('connect attributes')) : null;
  const zstdCompressionLevel = hasFlag(caps, Capability.ZstdCompression) && !r.atEnd() ? r.u8('zstd level') : null;
  return { kind: 'handshake-response', ...fields, username, authResponse, database, authPlugin, connectAttributes, zstdCompressionLevel };
}

function decodeAttributes(block: Buffer): Map<string, string> {
  const r = new PacketReader(block);
  const attributes = new Map<string, string>();
  while (!r.atEnd()) {
    const key = r.lenencString('attribute name');
    attributes.set(key, r.lenencString('attribute value'));
  }
  return attributes;
}

export interface HandshakeResponseFields {
  readonly capabilities: number;
  readonly maxPacketSize?: number;
  readonly characterSet: number;
  readonly mariaDbCapabilities?: number;
  readonly username: string;
  readonly authResponse: Uint8Array;
  readonly database?: string | null;
  readonly authPlugin?: string | null;
  readonly connectAttributes?: ReadonlyMap<string, string> | null;
  readonly zstdCompressionLevel?: number | null;
}

function writeFixedPrefix(w: PacketWriter, f: { capabilities: number; maxPacketSize?: number; characterSet: number; mariaDbCapabilities?: number }): void {
  const caps = f.capabilities >>> 0;
  w.u32(caps).u32(f.maxPacketSize ?? 0x01000000).u8(f.characterSet).zeros(FILLER_BYTES);
  w.u32(hasFlag(caps, Capability.LongPassword) ? 0 : (f.mariaDbCapabilities ?? 0));
}

/** Writes an SSLRequest (the client then starts TLS); returns the next sequence id. */
export function encodeSslRequest(
  w: PacketWriter,
  sequenceId: number,
  req: { capabilities: number; maxPacketSize?: number; characterSet: number; mariaDbCapabilities?: number },
): number {
  w.begin(sequenceId);
  writeFixedPrefix(w, { ...req, capabilities: req.capabilities | Capability.Ssl });
  return w.end();
}

/**
 * Writes a HandshakeResponse41. The optional parts follow the capability flags, which the
 * caller sets: CONNECT_WITH_DB for `database`, PLUGIN_AUTH for `authPlugin`, CONNECT_ATTRS for
 * `connectAttributes`. Returns the next sequence id.
 */
export function encodeHandshakeResponse(w: PacketWriter, sequenceId: number, res: HandshakeResponseFields): number {
  const caps = res.capabilities >>> 0;
  const encoding = encodingForCollation(res.characterSet);
  const long = !hasFlag(caps, Capability.PluginAuthLenencClientData) && hasFlag(caps, Capability.SecureConnection) && res.authResponse.length > 255;
  if (long) throw MalformedPacket('auth response longer than 255 bytes without CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA');
  w.begin(sequenceId);
  writeFixedPrefix(w, res);
  w.nulString(res.username, encoding);
  if (hasFlag(caps, Capability.PluginAuthLenencClientData)) w.lenencBytes(res.authResponse);
  else if (hasFlag(caps, Capability.SecureConnection)) w.u8(res.authResponse.length).bytes(res.authResponse);
  else w.bytes(res.authResponse).u8(0);
  if (hasFlag(caps, Capability.ConnectWithDb)) w.nulString(res.database ?? '', encoding);
  if (hasFlag(caps, Capability.PluginAuth)) w.nulString(res.authPlugin ?? '');
  if (hasFlag(caps, Capability.ConnectAttrs)) writeAttributes(w, res.connectAttributes ?? new Map());
  if (hasFlag(caps, Capability.ZstdCompression)) w.u8(res.zstdCompressionLevel ?? 3);
  return w.end();
}

function writeAttributes(w: PacketWriter, attributes: ReadonlyMap<string, string>): void {
  const parts: Buffer[] = [];
  for (const [k, v] of attributes) {
    for (const s of [k, v]) {
      const b = Buffer.from(s, 'utf8');
      parts.push(encodeLenenc(b.length), b);
    }
  }
  w.lenencBytes(Buffer.concat(parts));
}
