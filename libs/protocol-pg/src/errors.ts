// The error registry of protocol-pg: every error the codec raises, each with a stable code.
import { createError } from '@dbproxy/util';

/** A frame's declared length exceeds the configured maximum; nothing past the header was buffered. */
export const MessageTooLarge = createError<[string, number, number]>(
  'DBP_ERR_PG_MESSAGE_TOO_LARGE',
  '%s message of %d bytes exceeds the limit of %d bytes',
);
/** A frame's length field is impossible (shorter than its own header, or wrong for a fixed-size request). */
export const InvalidLength = createError<[string, number]>('DBP_ERR_PG_INVALID_LENGTH', 'invalid %s message length %d');
/** A message's body does not parse: truncated, trailing bytes, bad enum value, missing terminator. */
export const MalformedMessage = createError<[string, string]>('DBP_ERR_PG_MALFORMED', 'malformed %s message: %s');
/** A type byte that is not a message of this direction of the protocol. */
export const UnknownMessage = createError<[string, string]>('DBP_ERR_PG_UNKNOWN_MESSAGE', 'unknown %s message type %s');
/** A StartupMessage whose major protocol version is not 3. */
export const UnsupportedProtocol = createError<[number, number]>(
  'DBP_ERR_PG_UNSUPPORTED_PROTOCOL',
  'unsupported frontend protocol %d.%d: only 3.x is supported',
);
/** Bytes that arrived where the peer must wait for an answer (CVE-2021-23214 / CVE-2021-23222). */
export const UnexpectedData = createError<[number, string]>(
  'DBP_ERR_PG_UNEXPECTED_DATA',
  '%d unexpected bytes received after %s',
);
/** An Authentication request this codec does not implement (Kerberos, GSS, SSPI, SCM). */
export const UnsupportedAuth = createError<[number]>(
  'DBP_ERR_PG_UNSUPPORTED_AUTH',
  'unsupported authentication request type %d',
);
/** A message cannot be encoded: a string with NUL, a count or number out of its wire range. */
export const EncodeInvalid = createError<[string, string]>('DBP_ERR_PG_ENCODE_INVALID', 'cannot encode %s: %s');

/** A SCRAM exchange message does not follow RFC 5802. */
export const ScramMalformed = createError<[string, string]>('DBP_ERR_PG_SCRAM_MALFORMED', 'malformed SCRAM %s: %s');
/** The client asked for SCRAM channel binding (`p=`), which this codec does not offer. */
export const ScramChannelBinding = createError<[string]>(
  'DBP_ERR_PG_SCRAM_CHANNEL_BINDING',
  'SCRAM channel binding is not supported (%s)',
);
/** The nonce in client-final does not continue the nonce of server-first, or the server nonce does not extend ours. */
export const ScramNonceMismatch = createError<[string]>('DBP_ERR_PG_SCRAM_NONCE_MISMATCH', 'SCRAM nonce mismatch in %s');
/** The server's signature in server-final is not the one our password yields: the server does not know it. */
export const ScramServerSignature = createError('DBP_ERR_PG_SCRAM_SERVER_SIGNATURE', 'SCRAM server signature is invalid');
/** The server-final message carried `e=<reason>`. */
export const ScramServerError = createError<[string]>('DBP_ERR_PG_SCRAM_SERVER_ERROR', 'SCRAM server error: %s');
/** No SASL mechanism both sides implement: the server offers none we know, or the client picked one we do not offer. */
export const ScramMechanism = createError<[string]>('DBP_ERR_PG_SCRAM_MECHANISM', 'no usable SASL mechanism: %s');
/** A SCRAM step was called out of order. */
export const ScramState = createError<[string, string]>('DBP_ERR_PG_SCRAM_STATE', 'SCRAM %s called in state %s');
/** A stored `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>` verifier does not parse. */
export const ScramVerifierInvalid = createError<[string]>('DBP_ERR_PG_SCRAM_VERIFIER', 'invalid SCRAM verifier: %s');
/** An MD5 salt that is not 4 bytes, or an md5 stored hash that is not `md5` + 32 hex digits. */
export const Md5Invalid = createError<[string]>('DBP_ERR_PG_MD5_INVALID', 'invalid md5 authentication input: %s');

/** A type the terminating path cannot carry without loss. */
export const UnsupportedType = createError<[number]>(
  'DBP_ERR_PG_UNSUPPORTED_TYPE',
  'type oid %d is not supported in transaction mode; use transparent mode',
);
/** A format code other than 0 (text) or 1 (binary). */
export const UnsupportedFormat = createError<[number]>('DBP_ERR_PG_UNSUPPORTED_FORMAT', 'unsupported format code %d');
/** A wire value that is not valid for its type and format. */
export const ValueInvalid = createError<[string, string, string]>(
  'DBP_ERR_PG_VALUE_INVALID',
  'invalid %s %s value: %s',
);
/** A value outside its type's range (int overflow, date beyond PostgreSQL's calendar, numeric beyond its limits). */
export const ValueOutOfRange = createError<[string, string]>('DBP_ERR_PG_VALUE_OUT_OF_RANGE', '%s value out of range: %s');
/** A JavaScript value of the wrong kind for the type being encoded. */
export const ValueType = createError<[string, string, string]>('DBP_ERR_PG_VALUE_TYPE', '%s expects %s, got %s');
