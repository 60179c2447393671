// Decoding frames into backend messages and encoding backend messages into bytes, by table.
import { BackendCode, describeCode, EncryptionResponseCode, TransactionStatus } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import { EncodeInvalid, UnknownMessage } from '../errors';
import type { Frame } from '../framer';
import { decodeAuthentication, writeAuthentication } from './auth';
import type { BackendMessage, CopyResponse, NegotiateProtocolVersion, ReadyForQuery } from './messages';
import { decodeNoticeFields, writeNoticeFields } from './notice';
import { decodeDataRow, decodeParameterDescription, decodeRowDescription, writeDataRow, writeParameterDescription, writeRowDescription } from './rows';

const STATUSES: readonly string[] = Object.values(TransactionStatus);
const ENCRYPTION_ANSWERS: readonly number[] = Object.values(EncryptionResponseCode);

type CopyResponseType = 'CopyInResponse' | 'CopyOutResponse' | 'CopyBothResponse';
type Decoder = (reader: MessageReader) => BackendMessage;

function decodeCopyResponse<T extends CopyResponseType>(type: T): (r: MessageReader) => CopyResponse<T> {
  return (r) => {
    const format = r.u8();
    if (format > 1) r.fail(`overall format ${format}`);
    return { type, format, columnFormats: r.list(() => r.i16()) };
  };
}

function decodeNegotiateProtocolVersion(r: MessageReader): NegotiateProtocolVersion {
  const newestMinorVersion = r.i32();
  const count = r.i32();
  if (count < 0 || count > r.remaining) r.fail(`impossible option count ${count}`);
  const unrecognizedOptions = Array.from({ length: count }, () => r.cstring());
  return { type: 'NegotiateProtocolVersion', newestMinorVersion, unrecognizedOptions };
}

function decodeReadyForQuery(r: MessageReader): ReadyForQuery {
  const status = String.fromCharCode(r.u8());
  if (!STATUSES.includes(status)) r.fail(`unknown transaction status ${JSON.stringify(status)}`);
  return { type: 'ReadyForQuery', status: status as TransactionStatus };
}

const DECODERS: ReadonlyMap<number, [string, Decoder]> = new Map<number, [string, Decoder]>([
  [BackendCode.Authentication, ['Authentication', decodeAuthentication]],
  [BackendCode.BackendKeyData, ['BackendKeyData', (r) => ({ type: 'BackendKeyData', processId: r.i32(), secretKey: r.i32() })]],
  [BackendCode.BindComplete, ['BindComplete', () => ({ type: 'BindComplete' })]],
  [BackendCode.CloseComplete, ['CloseComplete', () => ({ type: 'CloseComplete' })]],
  [BackendCode.ParseComplete, ['ParseComplete', () => ({ type: 'ParseComplete' })]],
  [BackendCode.NoData, ['NoData', () => ({ type: 'NoData' })]],
  [BackendCode.PortalSuspended, ['PortalSuspended', () => ({ type: 'PortalSuspended' })]],
  [BackendCode.EmptyQueryResponse, ['EmptyQueryResponse', () => ({ type: 'EmptyQueryResponse' })]],
  [BackendCode.CopyDone, ['CopyDone', () => ({ type: 'CopyDone' })]],
  [BackendCode.CommandComplete, ['CommandComplete', (r) => ({ type: 'CommandComplete', tag: r.cstring() })]],
  [BackendCode.CopyInResponse, ['CopyInResponse', decodeCopyResponse('CopyInResponse')]],
  [BackendCode.CopyOutResponse, ['CopyOutResponse', decodeCopyResponse('CopyOutResponse')]],
  [BackendCode.CopyBothResponse, ['CopyBothResponse', decodeCopyResponse('CopyBothResponse')]],
  [BackendCode.CopyData, ['CopyData', (r) => ({ type: 'CopyData', data: r.rest() })]],
  [BackendCode.DataRow, ['DataRow', decodeDataRow]],
  [BackendCode.ErrorResponse, ['ErrorResponse', (r) => ({ type: 'ErrorResponse', ...decodeNoticeFields(r) })]],
  [BackendCode.NoticeResponse, ['NoticeResponse', (r) => ({ type: 'NoticeResponse', ...decodeNoticeFields(r) })]],
  [BackendCode.FunctionCallResponse, ['FunctionCallResponse', (r) => ({ type: 'FunctionCallResponse', result: r.nullableBytes() })]],
  [BackendCode.NegotiateProtocolVersion, ['NegotiateProtocolVersion', decodeNegotiateProtocolVersion]],
  [
    BackendCode.NotificationResponse,
    ['NotificationResponse', (r) => ({ type: 'NotificationResponse', processId: r.i32(), channel: r.cstring(), payload: r.cstring() })],
  ],
  [BackendCode.ParameterDescription, ['ParameterDescription', decodeParameterDescription]],
  [BackendCode.ParameterStatus, ['ParameterStatus', (r) => ({ type: 'ParameterStatus', name: r.cstring(), value: r.cstring() })]],
  [BackendCode.ReadyForQuery, ['ReadyForQuery', decodeReadyForQuery]],
  [BackendCode.RowDescription, ['RowDescription', decodeRowDescription]],
]);

/** Decodes one backend frame (typed, or the encryption answer byte). */
export function decodeBackendMessage(frame: Frame): BackendMessage {
  if (frame.kind === 'encryption-response') {
    return { type: 'EncryptionResponse', code: frame.code, accepted: frame.code !== EncryptionResponseCode.Refuse };
  }
  const entry = frame.kind === 'typed' ? DECODERS.get(frame.code) : undefined;
  if (!entry) throw UnknownMessage('backend', describeCode(frame.code));
  const reader = new MessageReader(frame.payload, entry[0]);
  const message = entry[1](reader);
  reader.end();
  return message;
}

type Encoders = { [K in BackendMessage['type']]: (w: MessageWriter, m: Extract<BackendMessage, { type: K }>) => void };
const empty = (code: number) => (w: MessageWriter) => void w.begin(code).end();
const copyResponse = (code: number) => (w: MessageWriter, m: CopyResponse<CopyResponseType>) =>
  void w.begin(code).u8(m.format).list(m.columnFormats, (f) => w.i16(f)).end();
const notice = (code: number) => (w: MessageWriter, m: Parameters<typeof writeNoticeFields>[1]) => {
  w.begin(code);
  writeNoticeFields(w, m);
  w.end();
};

const ENCODERS: Encoders = {
  EncryptionResponse(w, m) {
    if (!ENCRYPTION_ANSWERS.includes(m.code)) throw EncodeInvalid('EncryptionResponse', `code ${m.code}`);
    w.u8(m.code);
  },
  AuthenticationOk: writeAuthentication,
  AuthenticationCleartextPassword: writeAuthentication,
  AuthenticationMD5Password: writeAuthentication,
  AuthenticationSASL: writeAuthentication,
  AuthenticationSASLContinue: writeAuthentication,
  AuthenticationSASLFinal: writeAuthentication,
  BackendKeyData: (w, m) => void w.begin(BackendCode.BackendKeyData).i32(m.processId).i32(m.secretKey).end(),
  BindComplete: empty(BackendCode.BindComplete),
  CloseComplete: empty(BackendCode.CloseComplete),
  ParseComplete: empty(BackendCode.ParseComplete),
  NoData: empty(BackendCode.NoData),
  PortalSuspended: empty(BackendCode.PortalSuspended),
  EmptyQueryResponse: empty(BackendCode.EmptyQueryResponse),
  CopyDone: empty(BackendCode.CopyDone),
  CommandComplete: (w, m) => void w.begin(BackendCode.CommandComplete).cstring(m.tag).end(),
  CopyInResponse: copyResponse(BackendCode.CopyInResponse),
  CopyOutResponse: copyResponse(BackendCode.CopyOutResponse),
  CopyBothResponse: copyResponse(BackendCode.CopyBothResponse),
  CopyData: (w, m) => void w.begin(BackendCode.CopyData).bytes(m.data).end(),
  DataRow: writeDataRow,
  ErrorResponse: notice(BackendCode.ErrorResponse),
  NoticeResponse: notice(BackendCode.NoticeResponse),
  FunctionCallResponse: (w, m) => void w.begin(BackendCode.FunctionCallResponse).nullableBytes(m.result).end(),
  NegotiateProtocolVersion(w, m) {
    w.begin(BackendCode.NegotiateProtocolVersion).i32(m.newestMinorVersion).i32(m.unrecognizedOptions.length);
    for (const option of m.unrecognizedOptions) w.cstring(option);
    w.end();
  },
  NotificationResponse: (w, m) => void w.begin(BackendCode.NotificationResponse).i32(m.processId).cstring(m.channel).cstring(m.payload).end(),
  ParameterDescription: writeParameterDescription,
  ParameterStatus: (w, m) => void w.begin(BackendCode.ParameterStatus).cstring(m.name).cstring(m.value).end(),
  ReadyForQuery(w, m) {
    if (!STATUSES.includes(m.status)) throw EncodeInvalid('ReadyForQuery', `status ${m.status}`);
    w.begin(BackendCode.ReadyForQuery).u8(m.status.charCodeAt(0)).end();
  },
  RowDescription: writeRowDescription,
};

/** Appends one backend message; on error nothing is appended. */
export function writeBackendMessage(writer: MessageWriter, message: BackendMessage): void {
  const encode = ENCODERS[message.type] as ((w: MessageWriter, m: BackendMessage) => void) | undefined;
  if (!encode) throw EncodeInvalid('backend message', `unknown type ${String(message.type)}`);
  writer.atomic((w) => encode(w, message));
}

/** Encodes backend messages into one Buffer (one socket write). */
export function encodeBackendMessages(...messages: BackendMessage[]): Buffer {
  const writer = new MessageWriter();
  for (const message of messages) writeBackendMessage(writer, message);
  return writer.flush();
}
