// Server side of authentication: a pure state machine from the client's HandshakeResponse to accept/reject.
import { Buffer } from 'node:buffer';
import type { KeyLike } from 'node:crypto';
import type { HandshakeResponse } from '../handshake-response';
import {
  CACHING_SHA2_PLUGIN,
  CachingSha2Message,
  cachingSha2Digest,
  cleartextPassword,
  decryptPasswordWithPrivateKey,
  passwordsEqual,
  verifyCachingSha2Token,
} from './caching-sha2';
import { NATIVE_PASSWORD_PLUGIN, verifyNativePassword } from './native';

/** The reject reason when full auth without TLS got bytes that are not an RSA-encrypted password (e.g. a cleartext one). */
export const RSA_DECRYPT_FAILED = 'cannot RSA-decrypt the password: without TLS it must be RSA-encrypted (a client that believes the link secure sends it in clear)';

function tryDecrypt(payload: Buffer, scramble: Buffer, privateKey: KeyLike): string | null {
  try {
    return decryptPasswordWithPrivateKey(payload, scramble, privateKey);
  } catch {
    return null;
  }
}

export type ServerAuthPlugin = typeof NATIVE_PASSWORD_PLUGIN | typeof CACHING_SHA2_PLUGIN;

/** An account as the server knows it. Native accounts may hold the double-SHA1 hash instead of the password. */
export type AccountCredential =
  | { readonly plugin: typeof CACHING_SHA2_PLUGIN; readonly password: string }
  | { readonly plugin: typeof NATIVE_PASSWORD_PLUGIN; readonly password: string }
  | { readonly plugin: typeof NATIVE_PASSWORD_PLUGIN; readonly hash: Buffer };

/** Where fast-auth digests live between connections (a BoundedLru fits). */
export interface Sha2DigestCache {
  get(key: string): Buffer | undefined;
  set(key: string, digest: Buffer): void;
}

export interface ServerAuthOptions {
  /** The scramble sent in the initial handshake (20 bytes). */
  readonly scramble: Buffer;
  /** The account, or null for an unknown user (the exchange then runs to a reject). */
  readonly account: AccountCredential | null;
  /** Cache key of the account (e.g. the user name). */
  readonly cacheKey: string;
  /** True once TLS is established: full auth may then take the cleartext password. */
  readonly secure: boolean;
  readonly sha2Cache?: Sha2DigestCache;
  /** RSA key pair for full auth without TLS; without it such clients are rejected. */
  readonly rsa?: { readonly privateKey: KeyLike; readonly publicKeyPem: string };
}

/** What the server must send next. */
export type ServerAuthStep =
  | { readonly kind: 'more-data'; readonly data: Buffer }
  | { readonly kind: 'switch'; readonly plugin: ServerAuthPlugin; readonly data: Buffer }
  /** Send OK; before it, when `fastAuthSuccess`, an AuthMoreData carrying 0x03. */
  | { readonly kind: 'accept'; readonly fastAuthSuccess: boolean }
  | { readonly kind: 'reject'; readonly reason: string };

type Phase = 'initial' | 'token' | 'full-auth' | 'done';

/** Drives one connection's authentication: `start` with the HandshakeResponse, then `next` per client packet. */
export class ServerAuthExchange {
  private phase: Phase = 'initial';
  private plugin: ServerAuthPlugin = CACHING_SHA2_PLUGIN;

  constructor(private readonly options: ServerAuthOptions) {}

  get finished(): boolean {
    return this.phase === 'done';
  }

  start(response: Pick<HandshakeResponse, 'authPlugin' | 'authResponse'>): ServerAuthStep {
    if (this.phase !== 'initial') return this.reject('authentication already started');
    const clientPlugin = response.authPlugin ?? NATIVE_PASSWORD_PLUGIN;
    this.plugin = this.options.account?.plugin ?? (clientPlugin === NATIVE_PASSWORD_PLUGIN ? NATIVE_PASSWORD_PLUGIN : CACHING_SHA2_PLUGIN);
    if (clientPlugin !== this.plugin) {
      this.phase = 'token';
      return { kind: 'switch', plugin: this.plugin, data: Buffer.concat([this.options.scramble, Buffer.of(0)]) };
    }
    return this.checkToken(response.authResponse);
  }

  next(payload: Buffer): ServerAuthStep {
    if (this.phase === 'token') return this.checkToken(payload);
    if (this.phase === 'full-auth') return this.fullAuth(payload);
    return this.reject(`unexpected authentication packet in phase ${this.phase}`);
  }

  private checkToken(token: Buffer): ServerAuthStep {
    const account = this.options.account;
    if (this.plugin === NATIVE_PASSWORD_PLUGIN) {
      const ok = account !== null && account.plugin === NATIVE_PASSWORD_PLUGIN && verifyNativePassword(token, this.options.scramble, account);
      return ok ? this.accept(false) : this.reject('wrong password');
    }
    if (token.length === 0) {
      return account !== null && 'password' in account && account.password === '' ? this.accept(false) : this.reject('wrong password');
    }
    const cached = this.options.sha2Cache?.get(this.options.cacheKey);
    if (cached && account && 'password' in account && cached.equals(cachingSha2Digest(account.password))) {
      if (verifyCachingSha2Token(token, this.options.scramble, cached)) return this.accept(true);
    }
    this.phase = 'full-auth';
    return { kind: 'more-data', data: Buffer.of(CachingSha2Message.PerformFullAuthentication) };
  }

  private fullAuth(payload: Buffer): ServerAuthStep {
    const { rsa, secure, scramble } = this.options;
    if (!secure && payload.length === 1 && payload[0] === CachingSha2Message.RequestPublicKey) {
      if (!rsa) return this.reject('client asked for the RSA public key but none is configured');
      return { kind: 'more-data', data: Buffer.from(rsa.publicKeyPem, 'utf8') };
    }
    let password: string;
    if (secure) password = cleartextPassword(payload);
    else if (!rsa) return this.reject('full authentication needs TLS or an RSA key pair');
    else {
      // As MySQL 8: without TLS the bytes must be the RSA-encrypted password. A client that sent it
      // in clear anyway (it believed the link secure) is denied like a wrong password.
      const decrypted = tryDecrypt(payload, scramble, rsa.privateKey);
      if (decrypted === null) return this.reject(RSA_DECRYPT_FAILED);
      password = decrypted;
    }
    const account = this.options.account;
    if (account === null || !('password' in account) || !passwordsEqual(password, account.password)) return this.reject('wrong password');
    this.options.sha2Cache?.set(this.options.cacheKey, cachingSha2Digest(password));
    return this.accept(false);
  }

  private accept(fastAuthSuccess: boolean): ServerAuthStep {
    this.phase = 'done';
    return { kind: 'accept', fastAuthSuccess };
  }

  private reject(reason: string): ServerAuthStep {
    this.phase = 'done';
    return { kind: 'reject', reason };
  }
}
