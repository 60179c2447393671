// First-byte markers that tell generic response packets apart.

/** The first payload byte of the generic server packets. */
export const PacketHeader = {
  Ok: 0x00, // OK_Packet
  AuthMoreData: 0x01, // AuthMoreData (authentication phase only)
  LocalInfile: 0xfb, // LOCAL INFILE request
  Eof: 0xfe, // EOF_Packet; OK terminator with CLIENT_DEPRECATE_EOF; AuthSwitchRequest in the auth phase
  Err: 0xff, // ERR_Packet
} as const;

/** True for a legacy EOF packet (0xFE and shorter than 9 bytes). */
export function isEofPacket(payload: Buffer): boolean {
  return payload.length > 0 && payload.length < 9 && payload[0] === PacketHeader.Eof;
}

/** True for an OK packet with the 0x00 header (at least 7 bytes). */
export function isOkPacket(payload: Buffer): boolean {
  return payload.length >= 7 && payload[0] === PacketHeader.Ok;
}

export function isErrPacket(payload: Buffer): boolean {
  return payload.length > 0 && payload[0] === PacketHeader.Err;
}

/**
 * True for the packet ending a row stream: a 0xFE EOF, or with CLIENT_DEPRECATE_EOF an OK packet
 * with the 0xFE header. A row cannot be mistaken for it: a row starting with 0xFE holds a value
 * of 16 MiB or more, so its payload is at least 0xFFFFFF bytes.
 */
export function isResultSetTerminator(payload: Buffer, deprecateEof: boolean): boolean {
  return payload.length > 0 && endsResultSet(payload[0] as number, payload.length, deprecateEof);
}

/** isResultSetTerminator from a payload's first byte and length (a framed packet has both without its payload view). */
export function endsResultSet(header: number, payloadLength: number, deprecateEof: boolean): boolean {
  return header === PacketHeader.Eof && (deprecateEof ? payloadLength < 0xffffff : payloadLength < 9);
}
