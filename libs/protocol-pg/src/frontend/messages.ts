// The messages a PostgreSQL frontend (client) sends, as one discriminated union on `type`.
import type { TargetKind } from '../codes';

/** StartupMessage: protocol 3.x and the connection parameters (user, database, options, ...), in wire order. */
export interface StartupMessage {
  readonly type: 'StartupMessage';
  /** Major version in the high 16 bits, minor in the low 16 (196608 = 3.0). */
  readonly protocolVersion: number;
  readonly parameters: ReadonlyMap<string, string>;
}
export interface SSLRequest {
  readonly type: 'SSLRequest';
}
export interface GSSENCRequest {
  readonly type: 'GSSENCRequest';
}
export interface CancelRequest {
  readonly type: 'CancelRequest';
  readonly processId: number;
  readonly secretKey: number;
}
export type StartupPacket = StartupMessage | SSLRequest | GSSENCRequest | CancelRequest;

export interface Query {
  readonly type: 'Query';
  readonly sql: string;
}
export interface Parse {
  readonly type: 'Parse';
  /** '' is the unnamed statement. */
  readonly statement: string;
  readonly sql: string;
  /** Parameter type OIDs; 0 leaves the type to the server. */
  readonly paramTypes: readonly number[];
}
export interface Bind {
  readonly type: 'Bind';
  readonly portal: string;
  readonly statement: string;
  /** Empty: all text; one: applies to all; else one per parameter. */
  readonly paramFormats: readonly number[];
  /** Raw values in their format; null is SQL NULL. Slices of the received frame. */
  readonly params: readonly (Buffer | null)[];
  readonly resultFormats: readonly number[];
}
export interface Describe {
  readonly type: 'Describe';
  readonly kind: TargetKind;
  readonly name: string;
}
export interface Execute {
  readonly type: 'Execute';
  readonly portal: string;
  /** 0 means no limit. */
  readonly maxRows: number;
}
export interface Close {
  readonly type: 'Close';
  readonly kind: TargetKind;
  readonly name: string;
}
export interface Sync {
  readonly type: 'Sync';
}
export interface Flush {
  readonly type: 'Flush';
}
export interface Terminate {
  readonly type: 'Terminate';
}
export interface CopyData {
  readonly type: 'CopyData';
  readonly data: Buffer;
}
export interface CopyDone {
  readonly type: 'CopyDone';
}
export interface CopyFail {
  readonly type: 'CopyFail';
  readonly message: string;
}
export interface FunctionCall {
  readonly type: 'FunctionCall';
  readonly functionOid: number;
  readonly argFormats: readonly number[];
  readonly args: readonly (Buffer | null)[];
  readonly resultFormat: number;
}
export interface PasswordMessage {
  readonly type: 'PasswordMessage';
  /** Cleartext password, or `md5` + 32 hex digits in answer to AuthenticationMD5Password. */
  readonly password: string;
}
export interface SASLInitialResponse {
  readonly type: 'SASLInitialResponse';
  readonly mechanism: string;
  /** The client-first message; null when the client sent none (length -1). */
  readonly data: Buffer | null;
}
export interface SASLResponse {
  readonly type: 'SASLResponse';
  readonly data: Buffer;
}

/** Messages of the typed phase. */
export type FrontendTypedMessage =
  | Query
  | Parse
  | Bind
  | Describe
  | Execute
  | Close
  | Sync
  | Flush
  | Terminate
  | CopyData
  | CopyDone
  | CopyFail
  | FunctionCall
  | PasswordMessage
  | SASLInitialResponse
  | SASLResponse;

export type FrontendMessage = StartupPacket | FrontendTypedMessage;

/** Which of the three 'p' messages the server is waiting for, given the authentication request it sent. */
export type AuthResponseKind = 'password' | 'sasl-initial' | 'sasl';
