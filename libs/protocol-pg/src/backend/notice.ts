// ErrorResponse and NoticeResponse: the field list on the wire, and builders for dbproxy's own errors.
import { MessageReader, MessageWriter } from '../cursor';
import { EncodeInvalid } from '../errors';
import type { ErrorResponse, NoticeFields, NoticeResponse } from './messages';
import { SqlState } from './sql-state';

/** The field-type byte of each named field. */
export const NoticeFieldCode = {
  severity: 0x53, // 'S'
  severityNonLocalized: 0x56, // 'V'
  code: 0x43, // 'C'
  message: 0x4d, // 'M'
  detail: 0x44, // 'D'
  hint: 0x48, // 'H'
  position: 0x50, // 'P'
  internalPosition: 0x70, // 'p'
  internalQuery: 0x71, // 'q'
  where: 0x57, // 'W'
  schema: 0x73, // 's'
  table: 0x74, // 't'
  column: 0x63, // 'c'
  dataType: 0x64, // 'd'
  constraint: 0x6e, // 'n'
  file: 0x46, // 'F'
  line: 0x4c, // 'L'
  routine: 0x52, // 'R'
} as const satisfies Record<keyof NoticeFields, number>;

type FieldName = keyof NoticeFields;
const NAME_OF: ReadonlyMap<number, FieldName> = new Map(
  (Object.entries(NoticeFieldCode) as [FieldName, number][]).map(([name, code]) => [code, name]),
);

/** Reads the fields; unknown field types are skipped, as the protocol asks of clients. */
export function decodeNoticeFields(reader: MessageReader): NoticeFields {
  const fields: Partial<Record<FieldName, string>> = {};
  for (let code = reader.u8(); code !== 0; code = reader.u8()) {
    const value = reader.cstring();
    const name = NAME_OF.get(code);
    if (name) fields[name] = value;
  }
  if (fields.severity === undefined || fields.code === undefined || fields.message === undefined) {
    reader.fail('severity, code and message fields are required');
  }
  return fields as NoticeFields;
}

export function writeNoticeFields(w: MessageWriter, message: ErrorResponse | NoticeResponse): void {
  for (const [name, code] of Object.entries(NoticeFieldCode) as [FieldName, number][]) {
    const value = message[name];
    if (value !== undefined) w.u8(code).cstring(value);
  }
  w.u8(0);
}

/** Severities an ErrorResponse may carry; FATAL ends the session. */
export type ErrorSeverity = 'ERROR' | 'FATAL' | 'PANIC';

export type PgErrorInit = Omit<Partial<NoticeFields>, 'severity' | 'severityNonLocalized' | 'code' | 'message'> & {
  readonly code: string;
  readonly message: string;
  readonly severity?: ErrorSeverity;
};

/** Builds an ErrorResponse for dbproxy's own errors; the code must be a five-character SQLSTATE. */
export function pgError(init: PgErrorInit): ErrorResponse {
  if (!/^[0-9A-Z]{5}$/.test(init.code)) throw EncodeInvalid('ErrorResponse', `${init.code} is not a SQLSTATE`);
  const severity = init.severity ?? 'ERROR';
  return { ...init, type: 'ErrorResponse', severity, severityNonLocalized: severity };
}

/** Builds a NoticeResponse (severity WARNING, NOTICE, INFO, LOG or DEBUG). */
export function pgNotice(init: Omit<PgErrorInit, 'severity'> & { readonly severity?: string }): NoticeResponse {
  const severity = init.severity ?? 'NOTICE';
  return { ...init, type: 'NoticeResponse', severity, severityNonLocalized: severity };
}

/** The error PostgreSQL sends for a wrong password (and for an unknown user, so as not to reveal it). */
export function passwordAuthenticationFailed(user: string): ErrorResponse {
  return pgError({
    severity: 'FATAL',
    code: SqlState.InvalidPassword,
    message: `password authentication failed for user "${user}"`,
  });
}
