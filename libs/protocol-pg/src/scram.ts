// SCRAM-SHA-256 (RFC 5802/7677) shared parts: key derivation, stored verifiers, message attributes.
import { Buffer } from 'node:buffer';
import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { ScramMalformed, ScramVerifierInvalid } from './errors';
import { defaultRandom, type RandomSource } from './random';
import { saslprepPassword } from './saslprep';

export const SCRAM_SHA_256 = 'SCRAM-SHA-256';
/** PostgreSQL's default `scram_iterations`. */
export const DEFAULT_SCRAM_ITERATIONS = 4096;
/** Raw bytes in a nonce and in a salt, as PostgreSQL uses (base64-encoded on the wire). */
export const SCRAM_NONCE_BYTES = 18;
export const SCRAM_SALT_BYTES = 16;

/** What a server needs to verify a client (pg_authid.rolpassword holds exactly this). */
export interface ScramSecret {
  readonly iterations: number;
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

export const sha256 = (data: Buffer): Buffer => createHash('sha256').update(data).digest();
export const hmac = (key: Buffer, data: string | Buffer): Buffer => createHmac('sha256', key).update(data).digest();

export function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** SaltedPassword = Hi(SASLprep(password), salt, i), then ClientKey, StoredKey and ServerKey. */
export function deriveScramKeys(password: string, salt: Buffer, iterations: number): ScramSecret & { clientKey: Buffer } {
  const salted = pbkdf2Sync(Buffer.from(saslprepPassword(password), 'utf8'), salt, iterations, 32, 'sha256');
  const clientKey = hmac(salted, 'Client Key');
  return { iterations, salt, clientKey, storedKey: sha256(clientKey), serverKey: hmac(salted, 'Server Key') };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict base64 (Buffer.from would silently skip garbage). */
export function decodeBase64(text: string, what: string, fail: (detail: string) => Error): Buffer {
  if (!BASE64.test(text)) throw fail(`${what} is not valid base64`);
  return Buffer.from(text, 'base64');
}

/** Parses `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` as PostgreSQL stores it. */
export function parseScramVerifier(verifier: string): ScramSecret {
  const match = /^SCRAM-SHA-256\$(\d{1,10}):([^$:]+)\$([^$:]+):([^$:]+)$/.exec(verifier);
  if (!match) throw ScramVerifierInvalid('expected SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>');
  const fail = (detail: string) => ScramVerifierInvalid(detail);
  const iterations = Number(match[1]);
  if (iterations < 1 || iterations > 0x7fffffff) throw fail(`iteration count ${match[1]}`);
  const secret = {
    iterations,
    salt: decodeBase64(match[2], 'salt', fail),
    storedKey: decodeBase64(match[3], 'StoredKey', fail),
    serverKey: decodeBase64(match[4], 'ServerKey', fail),
  };
  if (secret.storedKey.length !== 32 || secret.serverKey.length !== 32) throw fail('keys must be 32 bytes');
  return secret;
}

export function formatScramVerifier(secret: ScramSecret): string {
  const b64 = (b: Buffer) => b.toString('base64');
  return `${SCRAM_SHA_256}$${secret.iterations}:${b64(secret.salt)}$${b64(secret.storedKey)}:${b64(secret.serverKey)}`;
}

export interface ScramVerifierOptions {
  readonly iterations?: number;
  readonly salt?: Buffer;
  readonly random?: RandomSource;
}

/** The verifier PostgreSQL would store for this password (`password_encryption = scram-sha-256`). */
export function scramVerifierFromPassword(password: string, options: ScramVerifierOptions = {}): string {
  const salt = options.salt ?? (options.random ?? defaultRandom)(SCRAM_SALT_BYTES);
  const { iterations, storedKey, serverKey } = deriveScramKeys(password, salt, options.iterations ?? DEFAULT_SCRAM_ITERATIONS);
  return formatScramVerifier({ iterations, salt, storedKey, serverKey });
}

/** A server-side secret from whatever the configuration holds: a verifier or a plaintext password. */
export function scramSecretFrom(passwordOrVerifier: string, options: ScramVerifierOptions = {}): ScramSecret {
  if (passwordOrVerifier.startsWith(`${SCRAM_SHA_256}$`)) return parseScramVerifier(passwordOrVerifier);
  return parseScramVerifier(scramVerifierFromPassword(passwordOrVerifier, options));
}

/** A fresh printable nonce: base64 of random bytes (never contains ','). */
export function scramNonce(random: RandomSource = defaultRandom): string {
  return random(SCRAM_NONCE_BYTES).toString('base64');
}

/** Splits `a=1,b=2` into ordered attributes; every part must be `<letter>=<value>`. */
export function parseAttributes(message: string, what: string): { key: string; value: string }[] {
  return message.split(',').map((part) => {
    if (!/^[A-Za-z]=/.test(part)) throw ScramMalformed(what, `expected attribute=value, got ${JSON.stringify(part.slice(0, 32))}`);
    return { key: part[0], value: part.slice(2) };
  });
}

/** Takes the next attribute, which must be `key`. */
export function expectAttribute(attrs: { key: string; value: string }[], key: string, what: string): string {
  const attr = attrs.shift();
  if (!attr || attr.key !== key) throw ScramMalformed(what, `expected attribute '${key}'`);
  return attr.value;
}

/** A nonce is printable ASCII except ','. */
export function isValidNonce(nonce: string): boolean {
  return /^[\x21-\x2b\x2d-\x7e]+$/.test(nonce);
}
