// Decoding frames into backend messages and encoding backend messages into bytes.
import { BackendCode, describeCode, EncryptionResponseCode, TransactionStatus } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import { EncodeInvalid, MalformedMessage, UnknownMessage } from '../errors';
import type { Frame } from '../framer';
import { decodeAuthentication, writeAuthentication } from './auth';
import type { BackendMessage, CopyResponse } from './messages';
import { decodeNoticeFields, writeNoticeFields } from './notice';
import { decodeDataRow, decodeParameterDescription, decodeRowDescription, writeDataRow, writeParameterDescription, writeRowDescription } from './rows';

const NAMES: ReadonlyMap<number, string> = new Map(Object.entries(BackendCode).map(([name, code]) => [code, name]));
const STATUSES: readonly string[] = Object.values(TransactionStatus);
const ENCRYPTION_ANSWERS: readonly number[] = Object.values(EncryptionResponseCode);

/** Decodes one backend frame (typed, or the encryption answer byte). */
export function decodeBackendMessage(frame: Frame): BackendMessage {
  if (frame.kind === 'encryption-response') {
    return { type: 'EncryptionResponse', code: frame.code, accepted: frame.code !== EncryptionResponseCode.Refuse };
  }
  const name = NAMES.get(frame.code);
  if (frame.kind !== 'typed' || name === undefined) throw UnknownMessage('backend', describeCode(frame.code));
  const reader = new MessageReader(frame.payload, name);
  const message = decodeTyped(frame.code, reader);
  reader.end();
  return message;
}

function decodeTyped(code: number, r: MessageReader): BackendMessage {
  switch (code) {
    case BackendCode.Authentication:
      return decodeAuthentication(r);
    case BackendCode.BackendKeyData:
      return { type: 'BackendKeyData', processId: r.i32(), secretKey: r.i32() };
    case BackendCode.BindComplete:
      return { type: 'BindComplete' };
    case BackendCode.CloseComplete:
      return { type: 'CloseComplete' };
    case BackendCode.ParseComplete:
      return { type: 'ParseComplete' };
    case BackendCode.NoData:
      return { type: 'NoData' };
    case BackendCode.PortalSuspended:
      return { type: 'PortalSuspended' };
    case BackendCode.EmptyQueryResponse:
      return { type: 'EmptyQueryResponse' };
    case BackendCode.CopyDone:
      return { type: 'CopyDone' };
    case BackendCode.CommandComplete:
      return { type: 'CommandComplete', tag: r.cstring() };
    case BackendCode.CopyInResponse:
      return decodeCopyResponse('CopyInResponse', r);
    case BackendCode.CopyOutResponse:
      return decodeCopyResponse('CopyOutResponse', r);
    case BackendCode.CopyBothResponse:
      return decodeCopyResponse('CopyBothResponse', r);
    case BackendCode.CopyData:
      return { type: 'CopyData', data: r.rest() };
    case BackendCode.DataRow:
      return decodeDataRow(r);
    case BackendCode.ErrorResponse:
      return { type: 'ErrorResponse', ...decodeNoticeFields(r) };
    case BackendCode.NoticeResponse:
      return { type: 'NoticeResponse', ...decodeNoticeFields(r) };
    case BackendCode.FunctionCallResponse:
      return { type: 'FunctionCallResponse', result: r.nullableBytes() };
    default:
      return decodeSessionMessage(code, r);
  }
}

function decodeSessionMessage(code: number, r: MessageReader): BackendMessage {
  switch (code) {
    case BackendCode.NegotiateProtocolVersion: {
      const newestMinorVersion = r.i32();
      const count = r.i32();
      if (count < 0 || count > r.remaining) r.fail(`impossible option count ${count}`);
      const unrecognizedOptions = Array.from({ length: count }, () => r.cstring());
      return { type: 'NegotiateProtocolVersion', newestMinorVersion, unrecognizedOptions };
    }
    case BackendCode.NotificationResponse:
      return { type: 'NotificationResponse', processId: r.i32(), channel: r.cstring(), payload: r.cstring() };
    case BackendCode.ParameterDescription:
      return decodeParameterDescription(r);
    case BackendCode.ParameterStatus:
      return { type: 'ParameterStatus', name: r.cstring(), value: r.cstring() };
    case BackendCode.ReadyForQuery: {
      const status = String.fromCharCode(r.u8());
      if (!STATUSES.includes(status)) r.fail(`unknown transaction status ${JSON.stringify(status)}`);
      return { type: 'ReadyForQuery', status: status as TransactionStatus };
    }
    case BackendCode.RowDescription:
      return decodeRowDescription(r);
    default:
      throw UnknownMessage('backend', describeCode(code));
  }
}

type CopyResponseType = 'CopyInResponse' | 'CopyOutResponse' | 'CopyBothResponse';

function decodeCopyResponse<T extends CopyResponseType>(type: T, r: MessageReader): CopyResponse<T> {
  const format = r.u8();
  if (format > 1) throw MalformedMessage(type, `overall format ${format}`);
  return { type, format, columnFormats: r.list(() => r.i16()) };
}

const COPY_CODES: Readonly<Record<CopyResponseType, number>> = {
  CopyInResponse: BackendCode.CopyInResponse,
  CopyOutResponse: BackendCode.CopyOutResponse,
  CopyBothResponse: BackendCode.CopyBothResponse,
};

const EMPTY_CODES = {
  BindComplete: BackendCode.BindComplete,
  CloseComplete: BackendCode.CloseComplete,
  ParseComplete: BackendCode.ParseComplete,
  NoData: BackendCode.NoData,
  PortalSuspended: BackendCode.PortalSuspended,
  EmptyQueryResponse: BackendCode.EmptyQueryResponse,
  CopyDone: BackendCode.CopyDone,
} as const;

/** Appends one backend message; on error nothing is appended. */
export function writeBackendMessage(writer: MessageWriter, message: BackendMessage): void {
  writer.atomic((w) => {
    switch (message.type) {
      case 'EncryptionResponse':
        if (!ENCRYPTION_ANSWERS.includes(message.code)) throw EncodeInvalid('EncryptionResponse', `code ${message.code}`);
        return void w.u8(message.code);
      case 'BindComplete':
      case 'CloseComplete':
      case 'ParseComplete':
      case 'NoData':
      case 'PortalSuspended':
      case 'EmptyQueryResponse':
      case 'CopyDone':
        return void w.begin(EMPTY_CODES[message.type]).end();
      case 'BackendKeyData':
        return void w.begin(BackendCode.BackendKeyData).i32(message.processId).i32(message.secretKey).end();
      case 'CommandComplete':
        return void w.begin(BackendCode.CommandComplete).cstring(message.tag).end();
      case 'CopyInResponse':
      case 'CopyOutResponse':
      case 'CopyBothResponse':
        w.begin(COPY_CODES[message.type]).u8(message.format);
        return void w.list(message.columnFormats, (f) => w.i16(f)).end();
      case 'CopyData':
        return void w.begin(BackendCode.CopyData).bytes(message.data).end();
      case 'DataRow':
        return writeDataRow(w, message);
      case 'ErrorResponse':
      case 'NoticeResponse':
        w.begin(message.type === 'ErrorResponse' ? BackendCode.ErrorResponse : BackendCode.NoticeResponse);
        writeNoticeFields(w, message);
        return void w.end();
      case 'FunctionCallResponse':
        return void w.begin(BackendCode.FunctionCallResponse).nullableBytes(message.result).end();
      default:
        return writeSessionMessage(w, message);
    }
  });
}

function writeSessionMessage(w: MessageWriter, message: BackendMessage): void {
  switch (message.type) {
    case 'NegotiateProtocolVersion':
      w.begin(BackendCode.NegotiateProtocolVersion).i32(message.newestMinorVersion).i32(message.unrecognizedOptions.length);
      for (const option of message.unrecognizedOptions) w.cstring(option);
      return void w.end();
    case 'NotificationResponse':
      return void w.begin(BackendCode.NotificationResponse).i32(message.processId).cstring(message.channel).cstring(message.payload).end();
    case 'ParameterDescription':
      return writeParameterDescription(w, message);
    case 'ParameterStatus':
      return void w.begin(BackendCode.ParameterStatus).cstring(message.name).cstring(message.value).end();
    case 'ReadyForQuery':
      if (!STATUSES.includes(message.status)) throw EncodeInvalid('ReadyForQuery', `status ${message.status}`);
      return void w.begin(BackendCode.ReadyForQuery).u8(message.status.charCodeAt(0)).end();
    case 'RowDescription':
      return writeRowDescription(w, message);
    case 'AuthenticationOk':
    case 'AuthenticationCleartextPassword':
    case 'AuthenticationMD5Password':
    case 'AuthenticationSASL':
    case 'AuthenticationSASLContinue':
    case 'AuthenticationSASLFinal':
      return writeAuthentication(w, message);
    default:
      throw EncodeInvalid('backend message', `unknown type ${(message as { type: string }).type}`);
  }
}

/** Encodes backend messages into one Buffer (one socket write). */
export function encodeBackendMessages(...messages: BackendMessage[]): Buffer {
  const writer = new MessageWriter();
  for (const message of messages) writeBackendMessage(writer, message);
  return writer.flush();
}
