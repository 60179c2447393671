// SQLSTATE codes dbproxy sends in its own ErrorResponses (PostgreSQL Appendix A names).

export const SqlState = {
  SuccessfulCompletion: '00000',
  ConnectionException: '08000',
  ConnectionFailure: '08006',
  SqlClientUnableToEstablishSqlConnection: '08001',
  ProtocolViolation: '08P01',
  FeatureNotSupported: '0A000',
  InvalidAuthorizationSpecification: '28000',
  InvalidPassword: '28P01',
  InvalidCatalogName: '3D000',
  InvalidTextRepresentation: '22P02',
  InvalidBinaryRepresentation: '22P03',
  NumericValueOutOfRange: '22003',
  DatetimeFieldOverflow: '22008',
  InvalidParameterValue: '22023',
  ReadOnlySqlTransaction: '25006',
  InFailedSqlTransaction: '25P02',
  TooManyConnections: '53300',
  ConfigurationLimitExceeded: '53400',
  ProgramLimitExceeded: '54000',
  QueryCanceled: '57014',
  AdminShutdown: '57P01',
  CannotConnectNow: '57P03',
  InternalError: 'XX000',
} as const;
export type SqlState = (typeof SqlState)[keyof typeof SqlState];

/** The SQLSTATE to report each protocol-pg error under when it must reach a client. */
const SQLSTATE_OF_ERROR: Readonly<Record<string, SqlState>> = {
  DBP_ERR_PG_MESSAGE_TOO_LARGE: SqlState.ProgramLimitExceeded,
  DBP_ERR_PG_INVALID_LENGTH: SqlState.ProtocolViolation,
  DBP_ERR_PG_MALFORMED: SqlState.ProtocolViolation,
  DBP_ERR_PG_UNKNOWN_MESSAGE: SqlState.ProtocolViolation,
  DBP_ERR_PG_UNSUPPORTED_PROTOCOL: SqlState.FeatureNotSupported,
  DBP_ERR_PG_UNEXPECTED_DATA: SqlState.ProtocolViolation,
  DBP_ERR_PG_UNSUPPORTED_AUTH: SqlState.FeatureNotSupported,
  DBP_ERR_PG_ENCODE_INVALID: SqlState.InternalError,
  DBP_ERR_PG_SCRAM_MALFORMED: SqlState.ProtocolViolation,
  DBP_ERR_PG_SCRAM_CHANNEL_BINDING: SqlState.ProtocolViolation,
  DBP_ERR_PG_SCRAM_NONCE_MISMATCH: SqlState.ProtocolViolation,
  DBP_ERR_PG_SCRAM_SERVER_SIGNATURE: SqlState.InvalidAuthorizationSpecification,
  DBP_ERR_PG_SCRAM_SERVER_ERROR: SqlState.InvalidAuthorizationSpecification,
  DBP_ERR_PG_SCRAM_MECHANISM: SqlState.FeatureNotSupported,
  DBP_ERR_PG_SCRAM_STATE: SqlState.ProtocolViolation,
  DBP_ERR_PG_SCRAM_VERIFIER: SqlState.InvalidAuthorizationSpecification,
  DBP_ERR_PG_MD5_INVALID: SqlState.ProtocolViolation,
  DBP_ERR_PG_UNSUPPORTED_TYPE: SqlState.FeatureNotSupported,
  DBP_ERR_PG_UNSUPPORTED_FORMAT: SqlState.ProtocolViolation,
  DBP_ERR_PG_VALUE_INVALID: SqlState.InvalidBinaryRepresentation,
  DBP_ERR_PG_VALUE_OUT_OF_RANGE: SqlState.NumericValueOutOfRange,
  DBP_ERR_PG_VALUE_TYPE: SqlState.InvalidParameterValue,
};

/** The SQLSTATE for a protocol-pg error code; XX000 (internal_error) for anything else. */
export function sqlStateForError(code: string | undefined): SqlState {
  return (code !== undefined && SQLSTATE_OF_ERROR[code]) || SqlState.InternalError;
}
