// Decoding frames into frontend messages and encoding frontend messages into bytes.
import { describeCode, FrontendCode } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import { UnknownMessage } from '../errors';
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
import { decodeStartupPacket, writeStartupPacket } from './startup';

const NAMES: ReadonlyMap<number, string> = new Map(Object.entries(FrontendCode).map(([name, code]) => [code, name]));

/**
 * Decodes one frontend frame. `auth` says which 'p' message the server is waiting for
 * (it depends on the authentication request it sent); it defaults to PasswordMessage.
 */
export function decodeFrontendMessage(frame: Frame, auth: AuthResponseKind = 'password'): FrontendMessage {
  if (frame.kind === 'startup') return decodeStartupPacket(frame);
  const name = NAMES.get(frame.code);
  if (frame.kind !== 'typed' || name === undefined) throw UnknownMessage('frontend', describeCode(frame.code));
  const reader = new MessageReader(frame.payload, name === 'AuthResponse' ? authName(auth) : name);
  const message = decodeTyped(frame.code, reader, auth);
  reader.end();
  return message;
}

function authName(auth: AuthResponseKind): string {
  return auth === 'password' ? 'PasswordMessage' : auth === 'sasl' ? 'SASLResponse' : 'SASLInitialResponse';
}

function decodeTyped(code: number, reader: MessageReader, auth: AuthResponseKind): FrontendTypedMessage {
  switch (code) {
    case FrontendCode.Query:
      return { type: 'Query', sql: reader.cstring() };
    case FrontendCode.Parse:
      return decodeParse(reader);
    case FrontendCode.Bind:
      return decodeBind(reader);
    case FrontendCode.Describe:
      return { type: 'Describe', ...decodeTarget(reader) };
    case FrontendCode.Execute:
      return decodeExecute(reader);
    case FrontendCode.Close:
      return { type: 'Close', ...decodeTarget(reader) };
    case FrontendCode.Sync:
      return { type: 'Sync' };
    case FrontendCode.Flush:
      return { type: 'Flush' };
    case FrontendCode.Terminate:
      return { type: 'Terminate' };
    case FrontendCode.CopyData:
      return { type: 'CopyData', data: reader.rest() };
    case FrontendCode.CopyDone:
      return { type: 'CopyDone' };
    case FrontendCode.CopyFail:
      return { type: 'CopyFail', message: reader.cstring() };
    case FrontendCode.FunctionCall:
      return decodeFunctionCall(reader);
    case FrontendCode.AuthResponse:
      if (auth === 'sasl-initial') return decodeSaslInitialResponse(reader);
      if (auth === 'sasl') return decodeSaslResponse(reader);
      return decodePasswordMessage(reader);
    default:
      throw UnknownMessage('frontend', describeCode(code));
  }
}

/** Appends one frontend message (startup-phase packets included); on error nothing is appended. */
export function writeFrontendMessage(writer: MessageWriter, message: FrontendMessage): void {
  writer.atomic((w) => {
    switch (message.type) {
      case 'StartupMessage':
      case 'SSLRequest':
      case 'GSSENCRequest':
      case 'CancelRequest':
        return writeStartupPacket(w, message);
      case 'Query':
        return void w.begin(FrontendCode.Query).cstring(message.sql).end();
      case 'Parse':
        return writeParse(w, message);
      case 'Bind':
        return writeBind(w, message);
      case 'Describe':
        return writeTarget(w, FrontendCode.Describe, message);
      case 'Execute':
        return writeExecute(w, message);
      case 'Close':
        return writeTarget(w, FrontendCode.Close, message);
      case 'Sync':
        return void w.begin(FrontendCode.Sync).end();
      case 'Flush':
        return void w.begin(FrontendCode.Flush).end();
      case 'Terminate':
        return void w.begin(FrontendCode.Terminate).end();
      case 'CopyData':
        return void w.begin(FrontendCode.CopyData).bytes(message.data).end();
      case 'CopyDone':
        return void w.begin(FrontendCode.CopyDone).end();
      case 'CopyFail':
        return void w.begin(FrontendCode.CopyFail).cstring(message.message).end();
      case 'FunctionCall':
        return writeFunctionCall(w, message);
      case 'PasswordMessage':
      case 'SASLInitialResponse':
      case 'SASLResponse':
        return writeAuthResponse(w, message);
    }
  });
}

/** Encodes frontend messages into one Buffer (one socket write). */
export function encodeFrontendMessages(...messages: FrontendMessage[]): Buffer {
  const writer = new MessageWriter();
  for (const message of messages) writeFrontendMessage(writer, message);
  return writer.flush();
}
