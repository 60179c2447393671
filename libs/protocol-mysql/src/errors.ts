// The error registry of protocol-mysql: every malformed or unsupported input becomes one of these.
import { createError } from '@dbproxy/util';

/** A frame header announced a packet above the configured maximum. */
export const PacketTooLarge = createError<[number, number]>(
  'DBP_ERR_MYSQL_PACKET_TOO_LARGE',
  'MySQL packet of %d bytes exceeds the maximum of %d bytes',
);

/** A decoder needed more bytes than the packet holds. */
export const PacketTruncated = createError<[string, number, number]>(
  'DBP_ERR_MYSQL_PACKET_TRUNCATED',
  'MySQL packet truncated reading %s: need %d bytes, %d left',
);

/** A field holds a value the protocol does not allow (bad marker, bad length prefix, ...). */
export const MalformedPacket = createError<[string]>('DBP_ERR_MYSQL_MALFORMED_PACKET', 'malformed MySQL packet: %s');

/** A frame arrived with a sequence id other than the one expected. */
export const SequenceMismatch = createError<[number, number]>(
  'DBP_ERR_MYSQL_SEQUENCE_MISMATCH',
  'MySQL packet sequence id %d, expected %d',
);

/** A packet that cannot appear at this point of a command's response. */
export const UnexpectedPacket = createError<[string, string]>(
  'DBP_ERR_MYSQL_UNEXPECTED_PACKET',
  'unexpected MySQL packet (%s) while %s',
);

/** A command byte the codec does not know. */
export const UnknownCommand = createError<[number]>('DBP_ERR_MYSQL_UNKNOWN_COMMAND', 'unknown MySQL command byte %d');

/** A feature of the protocol the codec deliberately refuses (MariaDB bulk/array binding, old protocol). */
export const UnsupportedFeature = createError<[string]>('DBP_ERR_MYSQL_UNSUPPORTED', 'unsupported MySQL protocol feature: %s');

/** A binary-protocol column or parameter type the codec cannot read or write. */
export const UnsupportedType = createError<[number]>('DBP_ERR_MYSQL_UNSUPPORTED_TYPE', 'unsupported MySQL binary type %d');

/** A JS value that cannot be encoded as the requested MySQL type. */
export const InvalidValue = createError<[string]>('DBP_ERR_MYSQL_INVALID_VALUE', 'cannot encode value: %s');

/** An authentication exchange received data it cannot use (wrong plugin, undecryptable RSA payload). */
export const AuthProtocolError = createError<[string]>('DBP_ERR_MYSQL_AUTH_PROTOCOL', 'MySQL authentication exchange failed: %s');

/** The client side of the codec was used out of order (e.g. fed packets before `begin`). */
export const InvalidState = createError<[string]>('DBP_ERR_MYSQL_INVALID_STATE', 'MySQL codec used out of order: %s');
