// The messages a PostgreSQL backend (server) sends, as one discriminated union on `type`.
import type { TransactionStatus } from '../codes';
// CopyData and CopyDone are the same message in both directions.
import type { CopyData, CopyDone } from '../frontend/messages';

export interface AuthenticationOk {
  readonly type: 'AuthenticationOk';
}
export interface AuthenticationCleartextPassword {
  readonly type: 'AuthenticationCleartextPassword';
}
export interface AuthenticationMD5Password {
  readonly type: 'AuthenticationMD5Password';
  /** 4 random bytes. */
  readonly salt: Buffer;
}
export interface AuthenticationSASL {
  readonly type: 'AuthenticationSASL';
  readonly mechanisms: readonly string[];
}
export interface AuthenticationSASLContinue {
  readonly type: 'AuthenticationSASLContinue';
  readonly data: Buffer;
}
export interface AuthenticationSASLFinal {
  readonly type: 'AuthenticationSASLFinal';
  readonly data: Buffer;
}
export type AuthenticationMessage =
  | AuthenticationOk
  | AuthenticationCleartextPassword
  | AuthenticationMD5Password
  | AuthenticationSASL
  | AuthenticationSASLContinue
  | AuthenticationSASLFinal;

export interface BackendKeyData {
  readonly type: 'BackendKeyData';
  readonly processId: number;
  readonly secretKey: number;
}
export interface BindComplete {
  readonly type: 'BindComplete';
}
export interface CloseComplete {
  readonly type: 'CloseComplete';
}
export interface ParseComplete {
  readonly type: 'ParseComplete';
}
export interface NoData {
  readonly type: 'NoData';
}
export interface PortalSuspended {
  readonly type: 'PortalSuspended';
}
export interface EmptyQueryResponse {
  readonly type: 'EmptyQueryResponse';
}
export interface CommandComplete {
  readonly type: 'CommandComplete';
  /** e.g. `SELECT 3`, `INSERT 0 1`. */
  readonly tag: string;
}
export interface CopyResponse<T extends 'CopyInResponse' | 'CopyOutResponse' | 'CopyBothResponse'> {
  readonly type: T;
  /** Overall format: 0 text, 1 binary. */
  readonly format: number;
  readonly columnFormats: readonly number[];
}
export type CopyInResponse = CopyResponse<'CopyInResponse'>;
export type CopyOutResponse = CopyResponse<'CopyOutResponse'>;
export type CopyBothResponse = CopyResponse<'CopyBothResponse'>;
export interface DataRow {
  readonly type: 'DataRow';
  /** Column values in their format; null is SQL NULL. Slices of the received frame. */
  readonly values: readonly (Buffer | null)[];
}

/** ErrorResponse/NoticeResponse fields, named after the protocol's field types. */
export interface NoticeFields {
  /** 'S': localized severity (ERROR, FATAL, PANIC, WARNING, NOTICE, DEBUG, INFO, LOG). */
  readonly severity: string;
  /** 'V': severity, never localized. */
  readonly severityNonLocalized?: string;
  /** 'C': SQLSTATE. */
  readonly code: string;
  /** 'M' */
  readonly message: string;
  readonly detail?: string; // 'D'
  readonly hint?: string; // 'H'
  readonly position?: string; // 'P'
  readonly internalPosition?: string; // 'p'
  readonly internalQuery?: string; // 'q'
  readonly where?: string; // 'W'
  readonly schema?: string; // 's'
  readonly table?: string; // 't'
  readonly column?: string; // 'c'
  readonly dataType?: string; // 'd'
  readonly constraint?: string; // 'n'
  readonly file?: string; // 'F'
  readonly line?: string; // 'L'
  readonly routine?: string; // 'R'
}
export interface ErrorResponse extends NoticeFields {
  readonly type: 'ErrorResponse';
}
export interface NoticeResponse extends NoticeFields {
  readonly type: 'NoticeResponse';
}
export interface FunctionCallResponse {
  readonly type: 'FunctionCallResponse';
  readonly result: Buffer | null;
}
export interface NegotiateProtocolVersion {
  readonly type: 'NegotiateProtocolVersion';
  readonly newestMinorVersion: number;
  readonly unrecognizedOptions: readonly string[];
}
export interface NotificationResponse {
  readonly type: 'NotificationResponse';
  readonly processId: number;
  readonly channel: string;
  readonly payload: string;
}
export interface ParameterDescription {
  readonly type: 'ParameterDescription';
  readonly typeOids: readonly number[];
}
export interface ParameterStatus {
  readonly type: 'ParameterStatus';
  readonly name: string;
  readonly value: string;
}
export interface ReadyForQuery {
  readonly type: 'ReadyForQuery';
  readonly status: TransactionStatus;
}
export interface FieldDescription {
  readonly name: string;
  /** OID of the table, or 0. */
  readonly tableOid: number;
  /** Attribute number of the column, or 0. */
  readonly columnAttr: number;
  readonly typeOid: number;
  /** pg_type.typlen: negative for variable width. */
  readonly typeSize: number;
  readonly typeModifier: number;
  /** 0 text, 1 binary (always 0 in a Describe of a statement). */
  readonly format: number;
}
export interface RowDescription {
  readonly type: 'RowDescription';
  readonly fields: readonly FieldDescription[];
}
/** The one-byte answer to SSLRequest/GSSENCRequest, when the backend decoder was told to expect it. */
export interface EncryptionResponse {
  readonly type: 'EncryptionResponse';
  /** 'S' or 'G': the server agreed; the stream continues encrypted. 'N': it refused. */
  readonly accepted: boolean;
  readonly code: number;
}

export type BackendMessage =
  | EncryptionResponse
  | AuthenticationMessage
  | BackendKeyData
  | BindComplete
  | CloseComplete
  | CommandComplete
  | CopyInResponse
  | CopyOutResponse
  | CopyBothResponse
  | CopyData
  | CopyDone
  | DataRow
  | EmptyQueryResponse
  | ErrorResponse
  | NoticeResponse
  | FunctionCallResponse
  | NegotiateProtocolVersion
  | NoData
  | NotificationResponse
  | ParameterDescription
  | ParameterStatus
  | ParseComplete
  | PortalSuspended
  | ReadyForQuery
  | RowDescription;
