// Simple-query, COPY, function-call and authentication messages of the frontend.
import { FrontendCode } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import type { FunctionCall, PasswordMessage, SASLInitialResponse, SASLResponse } from './messages';

export function decodeFunctionCall(reader: MessageReader): FunctionCall {
  const functionOid = reader.u32();
  const argFormats = reader.list(() => reader.i16());
  const args = reader.list(() => reader.nullableBytes());
  if (argFormats.length > 1 && argFormats.length !== args.length) {
    reader.fail(`${argFormats.length} argument formats for ${args.length} arguments`);
  }
  return { type: 'FunctionCall', functionOid, argFormats, args, resultFormat: reader.i16() };
}

export function writeFunctionCall(w: MessageWriter, m: FunctionCall): void {
  w.begin(FrontendCode.FunctionCall).u32(m.functionOid);
  w.list(m.argFormats, (f) => w.i16(f));
  w.list(m.args, (a) => w.nullableBytes(a));
  w.i16(m.resultFormat).end();
}

export function decodePasswordMessage(reader: MessageReader): PasswordMessage {
  return { type: 'PasswordMessage', password: reader.cstring() };
}

export function decodeSaslInitialResponse(reader: MessageReader): SASLInitialResponse {
  return { type: 'SASLInitialResponse', mechanism: reader.cstring(), data: reader.nullableBytes() };
}

export function decodeSaslResponse(reader: MessageReader): SASLResponse {
  return { type: 'SASLResponse', data: reader.rest() };
}

export function writeAuthResponse(w: MessageWriter, m: PasswordMessage | SASLInitialResponse | SASLResponse): void {
  w.begin(FrontendCode.AuthResponse);
  if (m.type === 'PasswordMessage') w.cstring(m.password);
  else if (m.type === 'SASLInitialResponse') w.cstring(m.mechanism).nullableBytes(m.data);
  else w.bytes(m.data);
  w.end();
}
