// SCRAM-SHA-256 client side: client-first, client-final with proof, and verification of server-final.
import { Buffer } from 'node:buffer';
import { ScramMalformed, ScramMechanism, ScramNonceMismatch, ScramServerError, ScramServerSignature, ScramState } from './errors';
import { defaultRandom, type RandomSource } from './random';
import {
  constantTimeEqual,
  decodeBase64,
  deriveScramKeys,
  expectAttribute,
  hmac,
  isValidNonce,
  parseAttributes,
  SCRAM_SHA_256,
  scramNonce,
  xor,
} from './scram';

export interface ScramClientOptions {
  readonly password: string;
  /** Sent in client-first; PostgreSQL ignores it (it authenticates the startup user), so libpq sends none. */
  readonly username?: string;
  readonly random?: RandomSource;
  /** Refuse servers that ask for more PBKDF2 iterations than this (a hostile server could burn our CPU). */
  readonly maxIterations?: number;
}

/** Channel binding is not supported: the GS2 header is always `n,,`. */
const GS2_HEADER = 'n,,';
const DEFAULT_MAX_ITERATIONS = 1_000_000;

type State = 'initial' | 'first-sent' | 'final-sent' | 'done';

/** One client-side SCRAM exchange; create one per authentication attempt. */
export class ScramClientSession {
  private state: State = 'initial';
  private readonly clientNonce: string;
  private clientFirstBare = '';
  private expectedServerSignature: Buffer | null = null;

  constructor(private readonly options: ScramClientOptions) {
    this.clientNonce = scramNonce(options.random ?? defaultRandom);
  }

  /** Picks SCRAM-SHA-256 from AuthenticationSASL's list (-PLUS variants need channel binding, which we do not do). */
  static chooseMechanism(offered: readonly string[]): string {
    if (!offered.includes(SCRAM_SHA_256)) throw ScramMechanism(`server offers ${offered.join(', ') || 'nothing'}`);
    return SCRAM_SHA_256;
  }

  /** The client-first message for SASLInitialResponse. */
  clientFirst(): Buffer {
    this.advance('initial', 'clientFirst');
    const saslname = (this.options.username ?? '').replace(/=/g, '=3D').replace(/,/g, '=2C');
    this.clientFirstBare = `n=${saslname},r=${this.clientNonce}`;
    return Buffer.from(GS2_HEADER + this.clientFirstBare);
  }

  /** Takes AuthenticationSASLContinue's server-first; returns client-final for SASLResponse. */
  clientFinal(serverFirstData: Buffer): Buffer {
    this.advance('first-sent', 'clientFinal');
    const what = 'server-first message';
    const serverFirst = serverFirstData.toString('utf8');
    const attrs = parseAttributes(serverFirst, what);
    if (attrs[0]?.key === 'm') throw ScramMalformed(what, 'mandatory extensions are not supported');
    const nonce = expectAttribute(attrs, 'r', what);
    if (!nonce.startsWith(this.clientNonce) || nonce.length === this.clientNonce.length || !isValidNonce(nonce)) {
      throw ScramNonceMismatch(what);
    }
    const salt = decodeBase64(expectAttribute(attrs, 's', what), 'salt', (d) => ScramMalformed(what, d));
    const iterations = parseIterations(expectAttribute(attrs, 'i', what), this.options.maxIterations ?? DEFAULT_MAX_ITERATIONS);
    const keys = deriveScramKeys(this.options.password, salt, iterations);
    const withoutProof = `c=${Buffer.from(GS2_HEADER).toString('base64')},r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const proof = xor(keys.clientKey, hmac(keys.storedKey, authMessage));
    this.expectedServerSignature = hmac(keys.serverKey, authMessage);
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`);
  }

  /** Takes AuthenticationSASLFinal's server-final; throws unless the server proved it knows the password. */
  verifyServerFinal(serverFinalData: Buffer): void {
    this.advance('final-sent', 'verifyServerFinal');
    const what = 'server-final message';
    const attrs = parseAttributes(serverFinalData.toString('utf8'), what);
    if (attrs[0]?.key === 'e') throw ScramServerError(attrs[0].value);
    const signature = decodeBase64(expectAttribute(attrs, 'v', what), 'verifier', (d) => ScramMalformed(what, d));
    if (!this.expectedServerSignature || !constantTimeEqual(signature, this.expectedServerSignature)) {
      throw ScramServerSignature();
    }
  }

  private advance(expected: State, step: string): void {
    if (this.state !== expected) throw ScramState(step, this.state);
    this.state = expected === 'initial' ? 'first-sent' : expected === 'first-sent' ? 'final-sent' : 'done';
  }
}

function parseIterations(text: string, max: number): number {
  if (!/^[1-9]\d{0,9}$/.test(text)) throw ScramMalformed('server-first message', `iteration count ${JSON.stringify(text)}`);
  const iterations = Number(text);
  if (iterations > max) throw ScramMalformed('server-first message', `iteration count ${iterations} exceeds ${max}`);
  return iterations;
}
