// Errors raised by the bus; every code is listed in libs/bus/README.md (Errors table).
import { createError } from '@dbproxy/util';

export const BusErrors = {
  /** A subject, pattern, KV bucket or key is not valid NATS syntax. */
  invalidSubject: createError<[string, string]>('DBP_ERR_BUS_INVALID_SUBJECT', 'invalid %s "%s"'),
  /** A header name or value cannot be carried on the bus. */
  invalidHeader: createError<[string]>('DBP_ERR_BUS_INVALID_HEADER', 'invalid bus header %s'),
  /** A payload is larger than the bus allows. */
  payloadTooLarge: createError<[string, number, number]>('DBP_ERR_BUS_PAYLOAD_TOO_LARGE', 'payload for %s is %d bytes, the limit is %d'),
  /** A request got no reply within its deadline. */
  timeout: createError<[string, number]>('DBP_ERR_BUS_TIMEOUT', 'request to %s got no reply within %d ms'),
  /** A request found no subscriber at all for its subject. */
  noResponders: createError<[string]>('DBP_ERR_BUS_NO_RESPONDERS', 'no service answers requests on %s'),
  /** The serving side failed and replied with an error (code and message from the server). */
  remote: createError<[string, string, string]>('DBP_ERR_BUS_REMOTE', 'request to %s failed remotely: %s %s'),
  /** A request failed for a transport reason other than timeout or no responders. */
  requestFailed: createError<[string, string]>('DBP_ERR_BUS_REQUEST_FAILED', 'request to %s failed: %s'),
  /** The operation needs a live NATS connection and there is none right now. */
  unavailable: createError<[string]>('DBP_ERR_BUS_UNAVAILABLE', 'the bus is not connected (%s)'),
  /** The bus was closed by its owner. */
  closed: createError<[string]>('DBP_ERR_BUS_CLOSED', 'the bus is closed (%s)'),
  /** No NATS connection was established within the time the caller waited. */
  connectTimeout: createError<[string, number]>('DBP_ERR_BUS_CONNECT_TIMEOUT', 'no connection to NATS at %s within %d ms'),
  /** NATS refused the bus's credentials (wrong user/password, token, NKey or .creds): retrying cannot help. */
  authRefused: createError<[string, string]>('DBP_ERR_BUS_AUTH_REFUSED', 'NATS at %s refused the credentials: %s'),
  /** The TLS handshake with NATS failed (unknown CA, wrong name, server without TLS): retrying cannot help. */
  tlsFailed: createError<[string, string]>('DBP_ERR_BUS_TLS_FAILED', 'TLS to NATS at %s failed: %s'),
  /** A compare-and-set KV put found a different revision. */
  kvRevisionMismatch: createError<[string, string, number]>('DBP_ERR_BUS_KV_REVISION_MISMATCH', 'kv %s/%s is not at expected revision %d'),
  /** A KV operation failed for a transport or server reason. */
  kvFailed: createError<[string, string, string]>('DBP_ERR_BUS_KV_FAILED', 'kv %s on bucket %s failed: %s'),
  /** A typed message failed validation (bad JSON, wrong version, schema). */
  malformedMessage: createError<[string, string]>('DBP_ERR_BUS_MALFORMED_MESSAGE', 'malformed message on %s: %s'),
  /** A typed message to be sent does not satisfy its own schema. */
  invalidPayload: createError<[string, string]>('DBP_ERR_BUS_INVALID_PAYLOAD', 'refusing to send an invalid %s message: %s'),
  /** A service key or identity setting is not usable (the key itself is never in the message). */
  identityInvalid: createError<[string, string]>('DBP_ERR_BUS_IDENTITY_INVALID', '%s %s'),
  /** This process holds no signing key for the service that owns a signed message. */
  notSigner: createError<[string, string]>('DBP_ERR_BUS_NOT_SIGNER', 'cannot send %s: only %s signs it and this process holds no key for it'),
  /** A signed message or reply failed verification (unsigned, wrong sender, bad signature, stale, replayed). */
  unauthenticated: createError<[string, string]>('DBP_ERR_BUS_UNAUTHENTICATED', 'refused message on %s: %s'),
} as const;
