// Authentication ('R') requests: Ok, cleartext, MD5 (with salt) and the SASL exchange.
import { AuthCode, BackendCode } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import { EncodeInvalid, UnsupportedAuth } from '../errors';
import type { AuthenticationMessage } from './messages';

export function decodeAuthentication(reader: MessageReader): AuthenticationMessage {
  const subtype = reader.i32();
  switch (subtype) {
    case AuthCode.Ok:
      return { type: 'AuthenticationOk' };
    case AuthCode.CleartextPassword:
      return { type: 'AuthenticationCleartextPassword' };
    case AuthCode.MD5Password:
      return { type: 'AuthenticationMD5Password', salt: reader.bytes(4) };
    case AuthCode.SASL:
      return { type: 'AuthenticationSASL', mechanisms: readMechanisms(reader) };
    case AuthCode.SASLContinue:
      return { type: 'AuthenticationSASLContinue', data: reader.rest() };
    case AuthCode.SASLFinal:
      return { type: 'AuthenticationSASLFinal', data: reader.rest() };
    default:
      throw UnsupportedAuth(subtype);
  }
}

function readMechanisms(reader: MessageReader): string[] {
  const mechanisms: string[] = [];
  for (let name = reader.cstring(); name !== ''; name = reader.cstring()) mechanisms.push(name);
  return mechanisms;
}

export function writeAuthentication(w: MessageWriter, m: AuthenticationMessage): void {
  w.begin(BackendCode.Authentication);
  switch (m.type) {
    case 'AuthenticationOk':
      w.i32(AuthCode.Ok);
      break;
    case 'AuthenticationCleartextPassword':
      w.i32(AuthCode.CleartextPassword);
      break;
    case 'AuthenticationMD5Password':
      if (m.salt.length !== 4) throw EncodeInvalid('AuthenticationMD5Password', 'the salt must be 4 bytes');
      w.i32(AuthCode.MD5Password).bytes(m.salt);
      break;
    case 'AuthenticationSASL':
      w.i32(AuthCode.SASL);
      for (const name of m.mechanisms) {
        if (name === '') throw EncodeInvalid('AuthenticationSASL', 'empty mechanism name');
        w.cstring(name);
      }
      w.u8(0);
      break;
    case 'AuthenticationSASLContinue':
      w.i32(AuthCode.SASLContinue).bytes(m.data);
      break;
    case 'AuthenticationSASLFinal':
      w.i32(AuthCode.SASLFinal).bytes(m.data);
      break;
  }
  w.end();
}
