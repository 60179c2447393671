// caching_sha2_password: SHA-256 scramble, fast-auth digests, cleartext over TLS and the RSA exchange.
import { Buffer } from 'node:buffer';
import { constants, createHash, privateDecrypt, publicEncrypt, timingSafeEqual, type KeyLike } from 'node:crypto';
import { AuthProtocolError } from '../errors';

export const CACHING_SHA2_PLUGIN = 'caching_sha2_password';

/** Single-byte messages of the plugin (sent inside AuthMoreData or as the client's payload). */
export const CachingSha2Message = {
  RequestPublicKey: 0x02, // client → server: send me your RSA public key
  FastAuthSuccess: 0x03, // server → client: cached digest matched, OK follows
  PerformFullAuthentication: 0x04, // server → client: send the password (TLS) or RSA-encrypt it
} as const;

function sha256(...parts: Uint8Array[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

/** The client's token: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble); empty for an empty password. */
export function cachingSha2Token(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const stage1 = sha256(Buffer.from(password, 'utf8'));
  const stage3 = sha256(sha256(stage1), scramble);
  const out = Buffer.allocUnsafe(32);
  for (let i = 0; i < 32; i++) out[i] = stage1[i] ^ stage3[i];
  return out;
}

/** SHA256(SHA256(password)): what a server caches after a full authentication, enabling fast auth. */
export function cachingSha2Digest(password: string): Buffer {
  return sha256(sha256(Buffer.from(password, 'utf8')));
}

/** Fast-auth check of a token against a cached digest. */
export function verifyCachingSha2Token(token: Buffer, scramble: Buffer, digest: Buffer): boolean {
  if (token.length !== 32 || digest.length !== 32) return false;
  const stage3 = sha256(digest, scramble);
  const stage1 = Buffer.allocUnsafe(32);
  for (let i = 0; i < 32; i++) stage1[i] = token[i] ^ stage3[i];
  return timingSafeEqual(sha256(stage1), digest);
}

/** XOR with the scramble repeated over the whole input. */
export function xorRotating(data: Buffer, scramble: Buffer): Buffer {
  const out = Buffer.allocUnsafe(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i] ^ scramble[i % scramble.length];
  return out;
}

/** Client side of full auth without TLS: RSA-OAEP(SHA1) of (password + NUL) XOR scramble. */
export function encryptPasswordWithPublicKey(password: string, scramble: Buffer, publicKey: KeyLike): Buffer {
  const plain = xorRotating(Buffer.from(`${password}\0`, 'utf8'), scramble);
  try {
    return publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, plain);
  } catch (err) {
    throw AuthProtocolError.withCause(err, 'cannot RSA-encrypt the password with the server key');
  }
}

/** Server side of full auth without TLS: recovers the password the client encrypted. */
export function decryptPasswordWithPrivateKey(ciphertext: Buffer, scramble: Buffer, privateKey: KeyLike): string {
  let plain: Buffer;
  try {
    plain = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, ciphertext);
  } catch (err) {
    throw AuthProtocolError.withCause(err, 'cannot RSA-decrypt the password');
  }
  return cleartextPassword(xorRotating(plain, scramble));
}

/** The password in a cleartext full-auth payload (sent over TLS): bytes up to the NUL. */
export function cleartextPassword(payload: Buffer): string {
  const nul = payload.indexOf(0);
  return (nul < 0 ? payload : payload.subarray(0, nul)).toString('utf8');
}

/** Constant-time comparison of two passwords. */
export function passwordsEqual(a: string, b: string): boolean {
  const x = sha256(Buffer.from(a, 'utf8'));
  const y = sha256(Buffer.from(b, 'utf8'));
  return timingSafeEqual(x, y);
}
