// Wire constants of the PROXY protocol (haproxy's proxy-protocol.txt), versions 1 (text) and 2 (binary).
import { Buffer } from 'node:buffer';

/** The 12 bytes every version 2 header starts with. */
export const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** Signature, version/command, family/transport and the 2-byte length. */
export const V2_FIXED_BYTES = 16;
/** The high nibble of byte 13. */
export const V2_VERSION = 0x20;

export const V2Command = {
  Local: 0x0, // health checks and the sender's own connections: the receiver keeps the real addresses
  Proxy: 0x1, // relayed on behalf of the client named in the address block
} as const;

export const V2Family = {
  Unspec: 0x00,
  Inet: 0x10,
  Inet6: 0x20,
  Unix: 0x30,
} as const;

export const V2Transport = {
  Unspec: 0x0,
  Stream: 0x1,
  Dgram: 0x2,
} as const;

/** Address block lengths per family: source and destination addresses, then ports. */
export const V2_ADDRESS_BYTES = { inet: 12, inet6: 36, unix: 216 } as const;

/** "PROXY " opens a version 1 header; the whole line is at most 107 bytes with its CRLF. */
export const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
export const V1_MAX_BYTES = 107;
