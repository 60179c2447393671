// Untyped startup-phase packets: StartupMessage, SSLRequest, GSSENCRequest, CancelRequest.
import { StartupCode } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import { EncodeInvalid, MalformedMessage, UnsupportedProtocol } from '../errors';
import type { Frame } from '../framer';
import type { CancelRequest, StartupMessage, StartupPacket } from './messages';

/** Decodes a frame the framer cut in the startup phase. */
export function decodeStartupPacket(frame: Frame): StartupPacket {
  if (frame.kind !== 'startup') throw MalformedMessage('startup packet', `got a ${frame.kind} frame`);
  switch (frame.code) {
    case StartupCode.SSLRequest:
      return fixedRequest('SSLRequest', frame.payload, { type: 'SSLRequest' });
    case StartupCode.GSSENCRequest:
      return fixedRequest('GSSENCRequest', frame.payload, { type: 'GSSENCRequest' });
    case StartupCode.CancelRequest:
      return decodeCancelRequest(frame.payload);
    default:
      return decodeStartupMessage(frame.code, frame.payload);
  }
}

function fixedRequest<T>(what: string, payload: Buffer, message: T): T {
  new MessageReader(payload, what).end();
  return message;
}

function decodeCancelRequest(payload: Buffer): CancelRequest {
  const reader = new MessageReader(payload, 'CancelRequest');
  const message: CancelRequest = { type: 'CancelRequest', processId: reader.i32(), secretKey: reader.i32() };
  reader.end();
  return message;
}

function decodeStartupMessage(code: number, payload: Buffer): StartupMessage {
  const major = code >>> 16;
  if (major !== 3) throw UnsupportedProtocol(major, code & 0xffff);
  const reader = new MessageReader(payload, 'StartupMessage');
  const parameters = new Map<string, string>();
  for (;;) {
    const name = reader.cstring();
    if (name === '') break;
    parameters.set(name, reader.cstring());
  }
  reader.end();
  return { type: 'StartupMessage', protocolVersion: code >>> 0, parameters };
}

/** Appends a startup-phase packet. */
export function writeStartupPacket(w: MessageWriter, message: StartupPacket): void {
  w.beginUntyped();
  switch (message.type) {
    case 'SSLRequest':
      w.i32(StartupCode.SSLRequest);
      break;
    case 'GSSENCRequest':
      w.i32(StartupCode.GSSENCRequest);
      break;
    case 'CancelRequest':
      w.i32(StartupCode.CancelRequest).i32(message.processId).i32(message.secretKey);
      break;
    case 'StartupMessage':
      w.u32(message.protocolVersion);
      for (const [name, value] of message.parameters) {
        if (name === '') throw EncodeInvalid('StartupMessage', 'empty parameter name');
        w.cstring(name).cstring(value);
      }
      w.u8(0);
      break;
  }
  w.end();
}
