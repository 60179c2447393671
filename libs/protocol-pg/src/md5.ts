// PostgreSQL md5 password authentication: `md5` + md5(md5(password + user) + salt).
import { Buffer } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Md5Invalid } from './errors';
import { defaultRandom, type RandomSource } from './random';

const STORED = /^md5[0-9a-f]{32}$/;

function md5Hex(...parts: (string | Buffer)[]): string {
  const hash = createHash('md5');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}

/** The form PostgreSQL stores in pg_authid.rolpassword: `md5` + md5(password + user). */
export function md5StoredPassword(user: string, password: string): string {
  return `md5${md5Hex(password, user)}`;
}

/** Whether a stored password is an md5 hash (as opposed to a SCRAM verifier or plaintext). */
export function isMd5StoredPassword(stored: string): boolean {
  return STORED.test(stored);
}

/** A fresh 4-byte salt for AuthenticationMD5Password. */
export function createMd5Salt(random: RandomSource = defaultRandom): Buffer {
  return checkSalt(random(4));
}

function checkSalt(salt: Buffer): Buffer {
  if (salt.length !== 4) throw Md5Invalid(`salt of ${salt.length} bytes, expected 4`);
  return salt;
}

/** The PasswordMessage a client sends for AuthenticationMD5Password. */
export function md5PasswordResponse(user: string, password: string, salt: Buffer): string {
  return md5ResponseFromStored(md5StoredPassword(user, password), salt);
}

/** The expected response computed from the stored `md5...` hash alone (no plaintext needed). */
export function md5ResponseFromStored(stored: string, salt: Buffer): string {
  if (!STORED.test(stored)) throw Md5Invalid('stored password is not md5 followed by 32 hex digits');
  return `md5${md5Hex(stored.slice(3), checkSalt(salt))}`;
}

export interface Md5Credentials {
  readonly user: string;
  /** The plaintext password, or the stored `md5...` hash. */
  readonly secret: string;
}

/** Server side: checks a client's PasswordMessage in constant time. */
export function verifyMd5Response(credentials: Md5Credentials, salt: Buffer, response: string): boolean {
  const stored = STORED.test(credentials.secret) ? credentials.secret : md5StoredPassword(credentials.user, credentials.secret);
  const expected = Buffer.from(md5ResponseFromStored(stored, salt));
  const actual = Buffer.from(response);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
