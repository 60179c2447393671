import { generateKeyPairSync } from 'node:crypto';
import { BoundedLru } from '@dbproxy/util';
import { Capability, DEFAULT_SERVER_CAPABILITIES } from '../capabilities';
import type { InitialHandshake } from '../handshake';
import { PacketWriter } from '../cursor';
import { encodeAuthMoreData, encodeAuthSwitchRequest } from '../packets/auth';
import { encodeErr } from '../packets/err';
import { encodeOk } from '../packets/ok';
import { thrownCode } from '../testing';
import {
  CACHING_SHA2_PLUGIN,
  cachingSha2Digest,
  cachingSha2Token,
  decryptPasswordWithPrivateKey,
  encryptPasswordWithPublicKey,
  verifyCachingSha2Token,
} from './caching-sha2';
import { ClientAuthExchange, type ClientAuthStep } from './client-exchange';
import { formatNativePasswordHash, NATIVE_PASSWORD_PLUGIN, nativePasswordHash, nativePasswordToken, parseNativePasswordHash, verifyNativePassword } from './native';
import { ServerAuthExchange, type AccountCredential, type ServerAuthOptions, type ServerAuthStep } from './server-exchange';

const scramble = Buffer.from('0123456789abcdefghij');

describe('mysql_native_password', () => {
  it('hashes like the server PASSWORD() function', () => {
    // Values returned by MariaDB 10.11 for SELECT PASSWORD('password'), PASSWORD('secret').
    expect(formatNativePasswordHash(nativePasswordHash('password'))).toBe('*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19');
    expect(formatNativePasswordHash(nativePasswordHash('secret'))).toBe('*14E65567ABDB5135D0CFD9A70B3032C179A49EE7');
  });

  it('computes the token other clients compute', () => {
    // Token from mysql2's independent implementation (lib/auth_41.js) for the same inputs.
    expect(nativePasswordToken('secret', scramble).toString('hex')).toBe('f5cac3f3b3df2133feb57db682c71e6ed433a988');
    expect(nativePasswordToken('', scramble)).toHaveLength(0);
  });

  it('verifies against the password or its stored double-SHA1 hash', () => {
    const token = nativePasswordToken('secret', scramble);
    expect(verifyNativePassword(token, scramble, { password: 'secret' })).toBe(true);
    expect(verifyNativePassword(token, scramble, { hash: parseNativePasswordHash('*14E65567ABDB5135D0CFD9A70B3032C179A49EE7') })).toBe(true);
    expect(verifyNativePassword(token, scramble, { password: 'Secret' })).toBe(false);
    expect(verifyNativePassword(token, Buffer.from('X123456789abcdefghij'), { password: 'secret' })).toBe(false);
    expect(verifyNativePassword(Buffer.alloc(0), scramble, { password: '' })).toBe(true);
    expect(verifyNativePassword(Buffer.alloc(0), scramble, { password: 'secret' })).toBe(false);
    expect(verifyNativePassword(token, scramble, { password: '' })).toBe(false);
    expect(verifyNativePassword(token.subarray(1), scramble, { password: 'secret' })).toBe(false);
  });

  it('refuses malformed stored hashes', () => {
    expect(thrownCode(() => parseNativePasswordHash('14E65567'))).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });
});

describe('caching_sha2_password math', () => {
  it('computes the token other clients compute', () => {
    // Token from mysql2's caching_sha2_password plugin (calculateToken) for the same inputs.
    expect(cachingSha2Token('secret', scramble).toString('hex')).toBe('7e4adda2f2d5ef09b4147518becb0cee2939376203650a8c2bb2815959364bd0');
  });

  it('verifies a token against the cached digest only', () => {
    const token = cachingSha2Token('secret', scramble);
    expect(verifyCachingSha2Token(token, scramble, cachingSha2Digest('secret'))).toBe(true);
    expect(verifyCachingSha2Token(token, scramble, cachingSha2Digest('other'))).toBe(false);
    expect(verifyCachingSha2Token(token.subarray(0, 31), scramble, cachingSha2Digest('secret'))).toBe(false);
  });

  it('RSA-OAEP round trip recovers the password, and garbage gives a typed error', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const sealed = encryptPasswordWithPublicKey('pässwörd', scramble, publicKey);
    expect(sealed).toHaveLength(256);
    expect(decryptPasswordWithPrivateKey(sealed, scramble, privateKey)).toBe('pässwörd');
    expect(thrownCode(() => decryptPasswordWithPrivateKey(Buffer.alloc(256, 1), scramble, privateKey))).toBe('DBP_ERR_MYSQL_AUTH_PROTOCOL');
    expect(thrownCode(() => encryptPasswordWithPublicKey('x'.repeat(300), scramble, publicKey))).toBe('DBP_ERR_MYSQL_AUTH_PROTOCOL');
  });
});

/** Plays a ClientAuthExchange against a ServerAuthExchange over encoded packets; returns the outcome. */
function converse(client: ClientAuthExchange, server: ServerAuthExchange, greeting: InitialHandshake): { outcome: string; trace: string[] } {
  const trace: string[] = [];
  const response = client.respond(greeting);
  let step: ServerAuthStep = server.start({ authPlugin: response.authPlugin ?? null, authResponse: Buffer.from(response.authResponse) });
  for (let round = 0; round < 10; round++) {
    trace.push(step.kind === 'more-data' ? `more-data:${step.data.length === 1 ? step.data[0] : 'key'}` : step.kind);
    const w = new PacketWriter();
    let clientStep: ClientAuthStep;
    if (step.kind === 'accept') {
      if (step.fastAuthSuccess) {
        encodeAuthMoreData(w, 2, Buffer.of(3));
        expect(client.next(w.flush().subarray(4))).toEqual({ kind: 'wait' });
      }
      encodeOk(w, 2, {}, client.capabilities);
      clientStep = client.next(w.flush().subarray(4));
      return { outcome: clientStep.kind, trace };
    }
    if (step.kind === 'reject') {
      encodeErr(w, 2, { code: 1045, sqlState: '28000', message: step.reason }, client.capabilities);
      clientStep = client.next(w.flush().subarray(4));
      return { outcome: `${clientStep.kind}:${step.reason}`, trace };
    }
    if (step.kind === 'switch') encodeAuthSwitchRequest(w, 2, step.plugin, step.data);
    else encodeAuthMoreData(w, 2, step.data);
    clientStep = client.next(w.flush().subarray(4));
    if (clientStep.kind !== 'send') throw new Error(`client did not answer: ${clientStep.kind}`);
    step = server.next(clientStep.data);
  }
  throw new Error('exchange did not finish');
}

describe('server and client exchanges against each other', () => {
  const rsa = (() => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  })();
  const greeting = (authPlugin: string): InitialHandshake => ({
    serverVersion: '8.0.36',
    connectionId: 1,
    scramble,
    capabilities: DEFAULT_SERVER_CAPABILITIES,
    mariaDbCapabilities: 0,
    characterSet: 45,
    statusFlags: 2,
    authPlugin,
  });
  const sha2Account: AccountCredential = { plugin: CACHING_SHA2_PLUGIN, password: 'secret' };
  const server = (account: AccountCredential | null, extra: Partial<ServerAuthOptions> = {}): ServerAuthExchange =>
    new ServerAuthExchange({ scramble, account, cacheKey: 'app', secure: false, rsa, ...extra });
  const client = (password: string, extra = {}): ClientAuthExchange => new ClientAuthExchange({ username: 'app', password, ...extra });

  it('caching_sha2: first login does the RSA exchange, the second takes the fast path', () => {
    const cache = new BoundedLru<string, Buffer>(10);
    const first = converse(client('secret'), server(sha2Account, { sha2Cache: cache }), greeting(CACHING_SHA2_PLUGIN));
    expect(first).toEqual({ outcome: 'done', trace: ['more-data:4', 'more-data:key', 'accept'] });
    const second = converse(client('secret'), server(sha2Account, { sha2Cache: cache }), greeting(CACHING_SHA2_PLUGIN));
    expect(second).toEqual({ outcome: 'done', trace: ['accept'] });
  });

  it('caching_sha2: a client that already has the public key skips the key request', () => {
    const out = converse(client('secret', { serverPublicKey: rsa.publicKeyPem }), server(sha2Account), greeting(CACHING_SHA2_PLUGIN));
    expect(out).toEqual({ outcome: 'done', trace: ['more-data:4', 'accept'] });
  });

  it('caching_sha2: over TLS the full authentication takes the cleartext password', () => {
    const out = converse(client('secret', { secure: true }), server(sha2Account, { secure: true, rsa: undefined }), greeting(CACHING_SHA2_PLUGIN));
    expect(out).toEqual({ outcome: 'done', trace: ['more-data:4', 'accept'] });
  });

  it('caching_sha2: a wrong password is rejected after full authentication, and not cached', () => {
    const cache = new BoundedLru<string, Buffer>(10);
    const out = converse(client('wrong'), server(sha2Account, { sha2Cache: cache }), greeting(CACHING_SHA2_PLUGIN));
    expect(out.outcome).toBe('failed:wrong password');
    expect(cache.size).toBe(0);
  });

  it('caching_sha2: without TLS or an RSA key the full authentication is refused', () => {
    const out = converse(client('secret'), server(sha2Account, { rsa: undefined }), greeting(CACHING_SHA2_PLUGIN));
    expect(out.outcome).toBe('failed:client asked for the RSA public key but none is configured');
  });

  it('caching_sha2: a stale cache entry (password changed) does not let the old password in', () => {
    const cache = new BoundedLru<string, Buffer>(10);
    cache.set('app', cachingSha2Digest('old'));
    const out = converse(client('old', { serverPublicKey: rsa.publicKeyPem }), server(sha2Account, { sha2Cache: cache }), greeting(CACHING_SHA2_PLUGIN));
    expect(out.outcome).toBe('failed:wrong password');
  });

  it('mysql_native_password accounts: verified directly, by hash too', () => {
    expect(converse(client('secret'), server({ plugin: NATIVE_PASSWORD_PLUGIN, password: 'secret' }), greeting(NATIVE_PASSWORD_PLUGIN))).toEqual({ outcome: 'done', trace: ['accept'] });
    const byHash: AccountCredential = { plugin: NATIVE_PASSWORD_PLUGIN, hash: nativePasswordHash('secret') };
    expect(converse(client('secret'), server(byHash), greeting(NATIVE_PASSWORD_PLUGIN)).outcome).toBe('done');
    expect(converse(client('nope'), server(byHash), greeting(NATIVE_PASSWORD_PLUGIN)).outcome).toBe('failed:wrong password');
  });

  it('switches plugin when the account uses another one than the client started with', () => {
    const native: AccountCredential = { plugin: NATIVE_PASSWORD_PLUGIN, password: 'secret' };
    expect(converse(client('secret'), server(native), greeting(CACHING_SHA2_PLUGIN))).toEqual({ outcome: 'done', trace: ['switch', 'accept'] });
    expect(converse(client('secret', { serverPublicKey: rsa.publicKeyPem }), server(sha2Account), greeting(NATIVE_PASSWORD_PLUGIN))).toEqual({
      outcome: 'done',
      trace: ['switch', 'more-data:4', 'accept'],
    });
  });

  it('empty passwords: accepted only for accounts without one', () => {
    const empty: AccountCredential = { plugin: CACHING_SHA2_PLUGIN, password: '' };
    expect(converse(client(''), server(empty), greeting(CACHING_SHA2_PLUGIN)).outcome).toBe('done');
    expect(converse(client(''), server(sha2Account), greeting(CACHING_SHA2_PLUGIN)).outcome).toBe('failed:wrong password');
  });

  it('unknown users run the exchange and are rejected', () => {
    expect(converse(client('secret', { serverPublicKey: rsa.publicKeyPem }), server(null), greeting(CACHING_SHA2_PLUGIN)).outcome).toBe('failed:wrong password');
    expect(converse(client('secret'), server(null), greeting(NATIVE_PASSWORD_PLUGIN)).outcome).toBe('failed:wrong password');
  });

  it('the client refuses a cleartext request without TLS and unknown plugins', () => {
    const c = client('secret');
    c.respond(greeting(NATIVE_PASSWORD_PLUGIN));
    const w = new PacketWriter();
    encodeAuthSwitchRequest(w, 2, 'mysql_clear_password', Buffer.alloc(0));
    encodeAuthSwitchRequest(w, 2, 'dialog', Buffer.alloc(0));
    const out = w.flush();
    expect(thrownCode(() => c.next(out.subarray(4, out.readUIntLE(0, 3) + 4)))).toBe('DBP_ERR_MYSQL_AUTH_PROTOCOL');
    expect(thrownCode(() => c.next(out.subarray(out.readUIntLE(0, 3) + 8)))).toBe('DBP_ERR_MYSQL_AUTH_PROTOCOL');
  });

  it('the client negotiates capabilities with the server offer', () => {
    const c = new ClientAuthExchange({ username: 'u', password: '', database: 'db' });
    const res = c.respond({ ...greeting(NATIVE_PASSWORD_PLUGIN), capabilities: Capability.Protocol41 | Capability.SecureConnection | Capability.ConnectWithDb });
    expect(res.capabilities).toBe(Capability.Protocol41 | Capability.SecureConnection | Capability.ConnectWithDb);
    expect(res.database).toBe('db');
  });

  it('a finished server exchange rejects further packets', () => {
    const s = server({ plugin: NATIVE_PASSWORD_PLUGIN, password: '' });
    expect(s.start({ authPlugin: NATIVE_PASSWORD_PLUGIN, authResponse: Buffer.alloc(0) }).kind).toBe('accept');
    expect(s.finished).toBe(true);
    expect(s.next(Buffer.of(1)).kind).toBe('reject');
  });
});
