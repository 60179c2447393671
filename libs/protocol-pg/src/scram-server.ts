// SCRAM-SHA-256 server side: answers client-first, verifies the client proof, signs server-final.
import { Buffer } from 'node:buffer';
import { ScramChannelBinding, ScramMalformed, ScramMechanism, ScramNonceMismatch, ScramState } from './errors';
import { defaultRandom, type RandomSource } from './random';
import {
  constantTimeEqual,
  decodeBase64,
  expectAttribute,
  hmac,
  isValidNonce,
  parseAttributes,
  SCRAM_SHA_256,
  SCRAM_SALT_BYTES,
  scramNonce,
  sha256,
  xor,
  DEFAULT_SCRAM_ITERATIONS,
  type ScramSecret,
} from './scram';

export interface ScramServerOptions {
  /** The user's secret; null for an unknown user: the exchange runs on made-up keys and fails, revealing nothing. */
  readonly secret: ScramSecret | null;
  readonly random?: RandomSource;
  /**
   * For unknown users: derive the mock salt from this server-wide key and the user name, so
   * repeated probes see the same salt for the same name, as with a real user (PostgreSQL does
   * the same with its cluster nonce). Without it the mock salt is random per attempt.
   */
  readonly mockSalt?: { readonly key: Buffer; readonly user: string };
}

export type ScramServerResult = { readonly ok: true; readonly serverFinal: Buffer } | { readonly ok: false };

type State = 'initial' | 'continue' | 'done';

/** One server-side SCRAM exchange; create one per authentication attempt. */
export class ScramServerSession {
  /** The mechanisms to offer in AuthenticationSASL (no -PLUS: channel binding is not offered). */
  static readonly mechanisms: readonly string[] = [SCRAM_SHA_256];

  private state: State = 'initial';
  private readonly secret: ScramSecret;
  private readonly random: RandomSource;
  private gs2Header = '';
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';

  constructor(options: ScramServerOptions) {
    this.random = options.random ?? defaultRandom;
    const mock = options.mockSalt;
    this.secret = options.secret ?? {
      iterations: DEFAULT_SCRAM_ITERATIONS,
      salt: mock ? hmac(mock.key, `mock salt for ${mock.user}`).subarray(0, SCRAM_SALT_BYTES) : this.random(SCRAM_SALT_BYTES),
      storedKey: this.random(32),
      serverKey: this.random(32),
    };
  }

  /** Takes SASLInitialResponse; returns the server-first message for AuthenticationSASLContinue. */
  handleClientFirst(mechanism: string, data: Buffer | null): Buffer {
    this.advance('initial', 'handleClientFirst');
    if (mechanism !== SCRAM_SHA_256) throw ScramMechanism(`client selected ${JSON.stringify(mechanism)}`);
    if (data === null) throw ScramMalformed('client-first message', 'missing');
    const text = data.toString('utf8');
    this.gs2Header = readGs2Header(text);
    this.clientFirstBare = text.slice(this.gs2Header.length);
    const attrs = parseAttributes(this.clientFirstBare, 'client-first message');
    if (attrs[0]?.key === 'm') throw ScramMalformed('client-first message', 'mandatory extensions are not supported');
    expectAttribute(attrs, 'n', 'client-first message'); // PostgreSQL uses the startup user, not this one
    const clientNonce = expectAttribute(attrs, 'r', 'client-first message');
    if (!isValidNonce(clientNonce)) throw ScramMalformed('client-first message', 'invalid nonce');
    this.nonce = clientNonce + scramNonce(this.random);
    this.serverFirst = `r=${this.nonce},s=${this.secret.salt.toString('base64')},i=${this.secret.iterations}`;
    return Buffer.from(this.serverFirst);
  }

  /** Takes SASLResponse; on success returns server-final for AuthenticationSASLFinal, else `ok: false` (send 28P01). */
  handleClientFinal(data: Buffer): ScramServerResult {
    this.advance('continue', 'handleClientFinal');
    const text = data.toString('utf8');
    const what = 'client-final message';
    const attrs = parseAttributes(text, what);
    const binding = decodeBase64(expectAttribute(attrs, 'c', what), 'channel binding', (d) => ScramMalformed(what, d));
    if (binding.toString('latin1') !== this.gs2Header) throw ScramMalformed(what, 'channel binding data does not match the GS2 header');
    if (expectAttribute(attrs, 'r', what) !== this.nonce) throw ScramNonceMismatch(what);
    const proofAttr = attrs.pop();
    if (!proofAttr || proofAttr.key !== 'p') throw ScramMalformed(what, 'proof must be the last attribute');
    const proof = decodeBase64(proofAttr.value, 'proof', (d) => ScramMalformed(what, d));
    if (proof.length !== 32) throw ScramMalformed(what, 'proof must be 32 bytes');
    const withoutProof = text.slice(0, text.length - proofAttr.value.length - 3);
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientKey = xor(proof, hmac(this.secret.storedKey, authMessage));
    if (!constantTimeEqual(sha256(clientKey), this.secret.storedKey)) return { ok: false };
    return { ok: true, serverFinal: Buffer.from(`v=${hmac(this.secret.serverKey, authMessage).toString('base64')}`) };
  }

  private advance(expected: State, step: string): void {
    if (this.state !== expected) throw ScramState(step, this.state);
    this.state = expected === 'initial' ? 'continue' : 'done';
  }
}

/** The GS2 header: `n,,` or `y,,`; `p=` (channel binding) and authorization identities are refused. */
function readGs2Header(text: string): string {
  const flag = text[0];
  if (flag === 'p') throw ScramChannelBinding('the client asked for it with p=');
  if ((flag !== 'n' && flag !== 'y') || text[1] !== ',') throw ScramMalformed('client-first message', 'invalid GS2 header');
  if (text.startsWith('a=', 2)) throw ScramMalformed('client-first message', 'authorization identities are not supported');
  if (text[2] !== ',') throw ScramMalformed('client-first message', 'invalid GS2 header');
  return text.slice(0, 3);
}
