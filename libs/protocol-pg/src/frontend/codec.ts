// Decoding frames into frontend messages and encoding frontend messages into bytes, by table.
import { describeCode, FrontendCode } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import { EncodeInvalid, UnknownMessage } from '../errors';
import type { Frame } from '../framer';
import { decodeBind, decodeExecute, decodeParse, decodeTarget, writeBind, writeExecute, writeParse, writeTarget } from './extended';
import type { AuthResponseKind, FrontendMessage, FrontendTypedMessage } from './messages';
import {
  decodeFunctionCall,
  decodePasswordMessage,
  decodeSaslInitialResponse,
  decodeSaslResponse,
  writeAuthResponse,
  writeFunctionCall,
} from './simple';
import { writeStartupPacket, decodeStartupPacket } from './startup';

type Decoder = (reader: MessageReader, auth: AuthResponseKind) => FrontendTypedMessage;

const AUTH_DECODERS: Readonly<Record<AuthResponseKind, Decoder>> = {
  password: decodePasswordMessage,
  'sasl-initial': decodeSaslInitialResponse,
  sasl: decodeSaslResponse,
};
const AUTH_NAMES: Readonly<Record<AuthResponseKind, string>> = {
  password: 'PasswordMessage',
  'sasl-initial': 'SASLInitialResponse',
  sasl: 'SASLResponse',
};

const DECODERS: ReadonlyMap<number, [string, Decoder]> = new Map<number, [string, Decoder]>([
  [FrontendCode.Query, ['Query', (r) => ({ type: 'Query', sql: r.cstring() })]],
  [FrontendCode.Parse, ['Parse', decodeParse]],
  [FrontendCode.Bind, ['Bind', decodeBind]],
  [FrontendCode.Describe, ['Describe', (r) => ({ type: 'Describe', ...decodeTarget(r) })]],
  [FrontendCode.Execute, ['Execute', decodeExecute]],
  [FrontendCode.Close, ['Close', (r) => ({ type: 'Close', ...decodeTarget(r) })]],
  [FrontendCode.Sync, ['Sync', () => ({ type: 'Sync' })]],
  [FrontendCode.Flush, ['Flush', () => ({ type: 'Flush' })]],
  [FrontendCode.Terminate, ['Terminate', () => ({ type: 'Terminate' })]],
  [FrontendCode.CopyData, ['CopyData', (r) => ({ type: 'CopyData', data: r.rest() })]],
  [FrontendCode.CopyDone, ['CopyDone', () => ({ type: 'CopyDone' })]],
  [FrontendCode.CopyFail, ['CopyFail', (r) => ({ type: 'CopyFail', message: r.cstring() })]],
  [FrontendCode.FunctionCall, ['FunctionCall', decodeFunctionCall]],
  [FrontendCode.AuthResponse, ['AuthResponse', (r, auth) => AUTH_DECODERS[auth](r, auth)]],
]);

/**
 * Decodes one frontend frame. `auth` says which 'p' message the server is waiting for
 * (it depends on the authentication request it sent); it defaults to PasswordMessage.
 */
export function decodeFrontendMessage(frame: Frame, auth: AuthResponseKind = 'password'): FrontendMessage {
  if (frame.kind === 'startup') return decodeStartupPacket(frame);
  const entry = frame.kind === 'typed' ? DECODERS.get(frame.code) : undefined;
  if (!entry) throw UnknownMessage('frontend', describeCode(frame.code));
  const [name, decode] = entry;
  const reader = new MessageReader(frame.payload, frame.code === FrontendCode.AuthResponse ? AUTH_NAMES[auth] : name);
  const message = decode(reader, auth);
  reader.end();
  return message;
}

type Encoders = { [K in FrontendMessage['type']]: (w: MessageWriter, m: Extract<FrontendMessage, { type: K }>) => void };
const empty = (code: number) => (w: MessageWriter) => void w.begin(code).end();

const ENCODERS: Encoders = {
  StartupMessage: writeStartupPacket,
  SSLRequest: writeStartupPacket,
  GSSENCRequest: writeStartupPacket,
  CancelRequest: writeStartupPacket,
  Query: (w, m) => void w.begin(FrontendCode.Query).cstring(m.sql).end(),
  Parse: writeParse,
  Bind: writeBind,
  Describe: (w, m) => writeTarget(w, FrontendCode.Describe, m),
  Execute: writeExecute,
  Close: (w, m) => writeTarget(w, FrontendCode.Close, m),
  Sync: empty(FrontendCode.Sync),
  Flush: empty(FrontendCode.Flush),
  Terminate: empty(FrontendCode.Terminate),
  CopyData: (w, m) => void w.begin(FrontendCode.CopyData).bytes(m.data).end(),
  CopyDone: empty(FrontendCode.CopyDone),
  CopyFail: (w, m) => void w.begin(FrontendCode.CopyFail).cstring(m.message).end(),
  FunctionCall: writeFunctionCall,
  PasswordMessage: writeAuthResponse,
  SASLInitialResponse: writeAuthResponse,
  SASLResponse: writeAuthResponse,
};

/** Appends one frontend message (startup-phase packets included); on error nothing is appended. */
export function writeFrontendMessage(writer: MessageWriter, message: FrontendMessage): void {
  const encode = ENCODERS[message.type] as ((w: MessageWriter, m: FrontendMessage) => void) | undefined;
  if (!encode) throw EncodeInvalid('frontend message', `unknown type ${String(message.type)}`);
  writer.atomic((w) => encode(w, message));
}

/** Encodes frontend messages into one Buffer (one socket write). */
export function encodeFrontendMessages(...messages: FrontendMessage[]): Buffer {
  const writer = new MessageWriter();
  for (const message of messages) writeFrontendMessage(writer, message);
  return writer.flush();
}
