// Wire codes of the PostgreSQL v3 protocol: message type bytes, request codes and enum values.

/** Type bytes of messages sent by the frontend (client). */
export const FrontendCode = {
  Bind: 0x42, // 'B'
  Close: 0x43, // 'C'
  CopyData: 0x64, // 'd'
  CopyDone: 0x63, // 'c'
  CopyFail: 0x66, // 'f'
  Describe: 0x44, // 'D'
  Execute: 0x45, // 'E'
  Flush: 0x48, // 'H'
  FunctionCall: 0x46, // 'F'
  Parse: 0x50, // 'P'
  /** PasswordMessage, SASLInitialResponse and SASLResponse share this byte; the auth state tells them apart. */
  AuthResponse: 0x70, // 'p'
  Query: 0x51, // 'Q'
  Sync: 0x53, // 'S'
  Terminate: 0x58, // 'X'
} as const;
export type FrontendCode = (typeof FrontendCode)[keyof typeof FrontendCode];

/** Type bytes of messages sent by the backend (server). */
export const BackendCode = {
  Authentication: 0x52, // 'R'
  BackendKeyData: 0x4b, // 'K'
  BindComplete: 0x32, // '2'
  CloseComplete: 0x33, // '3'
  CommandComplete: 0x43, // 'C'
  CopyBothResponse: 0x57, // 'W'
  CopyData: 0x64, // 'd'
  CopyDone: 0x63, // 'c'
  CopyInResponse: 0x47, // 'G'
  CopyOutResponse: 0x48, // 'H'
  DataRow: 0x44, // 'D'
  EmptyQueryResponse: 0x49, // 'I'
  ErrorResponse: 0x45, // 'E'
  FunctionCallResponse: 0x56, // 'V'
  NegotiateProtocolVersion: 0x76, // 'v'
  NoData: 0x6e, // 'n'
  NoticeResponse: 0x4e, // 'N'
  NotificationResponse: 0x41, // 'A'
  ParameterDescription: 0x74, // 't'
  ParameterStatus: 0x53, // 'S'
  ParseComplete: 0x31, // '1'
  PortalSuspended: 0x73, // 's'
  ReadyForQuery: 0x5a, // 'Z'
  RowDescription: 0x54, // 'T'
} as const;
export type BackendCode = (typeof BackendCode)[keyof typeof BackendCode];

/** The int32 after the length of an untyped startup-phase packet. */
export const StartupCode = {
  /** Protocol 3.0: major 3 in the high 16 bits, minor 0 in the low 16. */
  ProtocolVersion3: 0x00030000, // 196608
  CancelRequest: 80877102, // 1234 << 16 | 5678
  SSLRequest: 80877103, // 1234 << 16 | 5679
  GSSENCRequest: 80877104, // 1234 << 16 | 5680
} as const;

/** The single byte a server answers an SSLRequest or GSSENCRequest with. */
export const EncryptionResponseCode = {
  Accept: 0x53, // 'S'
  Refuse: 0x4e, // 'N'
  /** A GSSENCRequest accepted: GSS wrapping follows. */
  AcceptGss: 0x47, // 'G'
} as const;

/** The int32 subtype of an Authentication ('R') message. */
export const AuthCode = {
  Ok: 0,
  KerberosV5: 2,
  CleartextPassword: 3,
  MD5Password: 5,
  SCMCredential: 6,
  GSS: 7,
  GSSContinue: 8,
  SSPI: 9,
  SASL: 10,
  SASLContinue: 11,
  SASLFinal: 12,
} as const;

/** ReadyForQuery transaction status bytes. */
export const TransactionStatus = {
  Idle: 'I', // 0x49
  InTransaction: 'T', // 0x54
  Failed: 'E', // 0x45
} as const;
export type TransactionStatus = (typeof TransactionStatus)[keyof typeof TransactionStatus];

/** Describe/Close target bytes. */
export const TargetKind = {
  Statement: 'S', // 0x53
  Portal: 'P', // 0x50
} as const;
export type TargetKind = (typeof TargetKind)[keyof typeof TargetKind];

/** Column and parameter format codes. */
export const FormatCode = {
  Text: 0,
  Binary: 1,
} as const;
export type FormatCode = (typeof FormatCode)[keyof typeof FormatCode];

/** A type byte as it reads in an error message: `'Q'`, or hex when unprintable. */
export function describeCode(code: number): string {
  return code >= 0x20 && code < 0x7f ? `'${String.fromCharCode(code)}'` : `0x${code.toString(16).padStart(2, '0')}`;
}
