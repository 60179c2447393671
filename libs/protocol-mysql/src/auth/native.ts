// mysql_native_password: SHA1 challenge-response, checked against a password or its double-SHA1 hash.
import { Buffer } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';
import { MalformedPacket } from '../errors';

export const NATIVE_PASSWORD_PLUGIN = 'mysql_native_password';

function sha1(...parts: Uint8Array[]): Buffer {
  const h = createHash('sha1');
  for (const p of parts) h.update(p);
  return h.digest();
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** SHA1(SHA1(password)): what mysql.user stores (as `*` + hex) for this plugin. */
export function nativePasswordHash(password: string): Buffer {
  return sha1(sha1(Buffer.from(password, 'utf8')));
}

/** The `*HEX` form of a double-SHA1 hash, as in mysql.user.authentication_string. */
export function formatNativePasswordHash(hash: Buffer): string {
  return `*${hash.toString('hex').toUpperCase()}`;
}

/** Parses `*` followed by 40 hex digits into the 20-byte double-SHA1 hash. */
export function parseNativePasswordHash(text: string): Buffer {
  if (!/^\*[0-9A-Fa-f]{40}$/.test(text)) throw MalformedPacket('native password hash is not * followed by 40 hex digits');
  return Buffer.from(text.slice(1), 'hex');
}

/** The client's token: SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))); empty for an empty password. */
export function nativePasswordToken(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const stage1 = sha1(Buffer.from(password, 'utf8'));
  return xor(stage1, sha1(scramble, sha1(stage1)));
}

/** What the server knows about an account: the password itself or its double-SHA1 hash. */
export type NativeCredential = { readonly password: string } | { readonly hash: Buffer };

/** Checks a client token against the scramble sent and the stored credential. */
export function verifyNativePassword(token: Buffer, scramble: Buffer, credential: NativeCredential): boolean {
  const stored = 'password' in credential ? (credential.password === '' ? null : nativePasswordHash(credential.password)) : credential.hash;
  if (stored === null || token.length === 0) return stored === null && token.length === 0;
  if (token.length !== 20 || stored.length !== 20) return false;
  const stage1 = xor(token, sha1(scramble, stored));
  return timingSafeEqual(sha1(stage1), stored);
}
