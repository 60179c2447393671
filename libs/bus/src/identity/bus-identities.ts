// Which services this process signs for (their seeds) and whom it believes (every owning
// service's public key): seals outgoing signed messages and verifies received ones.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { BusErrors } from '../errors';
import type { RejectReason } from './rejections';
import { signingKeyFromSeed, verifyingKeyFromPublic, type SigningKey, type VerifyingKey } from './service-keys';
import { joinEnvelope, SignatureBlock, signingInput, splitEnvelope } from './signed-envelope';

/** A signed message kind and the one service allowed to send it (declared in the catalogue). */
export interface SignedKind {
  readonly service: string;
  /** Metric label: bgd_action, xa_execute, xa_execute_reply, config_epoch. */
  readonly kind: string;
}

export interface BusIdentityOptions {
  /** Service name → nkeys public key (`U…`) of every service that owns signed messages. */
  readonly trusted: Readonly<Record<string, string>>;
  /** Service name → nkeys seed (`SU…`) of the services this process sends signed messages for. */
  readonly seeds: Readonly<Record<string, string>>;
  /** How old (or how far in the future) a signed message may be. */
  readonly maxAgeMs: number;
}

export type Verdict = { readonly ok: true; readonly atMs: number; readonly nonce: string } | { readonly ok: false; readonly reason: RejectReason; readonly detail: string };

export class BusIdentities {
  private constructor(
    private readonly signers: ReadonlyMap<string, SigningKey>,
    private readonly verifiers: ReadonlyMap<string, VerifyingKey>,
    readonly maxAgeMs: number,
  ) {}

  /** Parses every key; throws DBP_ERR_BUS_IDENTITY_INVALID when one is malformed or a seed does not match its service's public key. */
  static create(opts: BusIdentityOptions): BusIdentities {
    const verifiers = new Map(Object.entries(opts.trusted).map(([service, key]) => [service, verifyingKeyFromPublic(key, `the public key of ${service}`)]));
    const signers = new Map<string, SigningKey>();
    for (const [service, seed] of Object.entries(opts.seeds)) {
      const key = signingKeyFromSeed(seed, `the signing seed of ${service}`);
      const expected = verifiers.get(service)?.publicKey;
      if (expected !== key.publicKey) throw BusErrors.identityInvalid(`the signing seed of ${service}`, `belongs to public key ${key.publicKey}, but ${service}'s configured public key is ${expected ?? '(none)'}`);
      signers.set(service, key);
    }
    if (!(opts.maxAgeMs > 0)) throw BusErrors.identityInvalid('max age', 'must be positive');
    return new BusIdentities(signers, verifiers, opts.maxAgeMs);
  }

  canSign(service: string): boolean {
    return this.signers.has(service);
  }

  /** Adds a signature block to an encoded envelope; throws DBP_ERR_BUS_NOT_SIGNER without the owner's seed. */
  seal(data: Uint8Array, signed: SignedKind, purpose: string, what: string): { data: Uint8Array; nonce: string } {
    const key = this.signers.get(signed.service);
    if (!key) throw BusErrors.notSigner(what, signed.service);
    const split = splitEnvelope(data);
    if (!split) throw BusErrors.invalidPayload(what, 'not a JSON object');
    const block = { by: signed.service, at: new Date().toISOString(), nonce: randomBytes(18).toString('base64url') };
    const sig = Buffer.from(key.sign(signingInput(purpose, block, split.body))).toString('base64url');
    return { data: joinEnvelope(split.body, { ...block, sig }), nonce: block.nonce };
  }

  /** Checks the sender of a received envelope; `checkAge` off for KV records, which stay valid until replaced. */
  verify(data: Uint8Array, signed: SignedKind, purpose: string, checkAge: boolean, now = Date.now()): Verdict {
    const split = splitEnvelope(data);
    if (!split || split.signed === undefined) return { ok: false, reason: 'unsigned', detail: `no signature; only ${signed.service} may send this` };
    const parsed = SignatureBlock.safeParse(split.signed);
    if (!parsed.success) return { ok: false, reason: 'bad-signature', detail: 'malformed signature block' };
    const block = parsed.data;
    if (block.by !== signed.service) return { ok: false, reason: 'wrong-sender', detail: `signed by ${block.by}; only ${signed.service} may send this` };
    const key = this.verifiers.get(block.by);
    if (!key) return { ok: false, reason: 'unknown-sender', detail: `no public key configured for ${block.by}` };
    if (!key.verify(signingInput(purpose, block, split.body), Buffer.from(block.sig, 'base64url'))) {
      return { ok: false, reason: 'bad-signature', detail: `signature does not verify against ${block.by}'s public key` };
    }
    const atMs = Date.parse(block.at);
    if (checkAge && Math.abs(now - atMs) > this.maxAgeMs) return { ok: false, reason: 'stale', detail: `signed at ${block.at}, outside the ${this.maxAgeMs} ms window` };
    return { ok: true, atMs, nonce: block.nonce };
  }
}

/**
 * Refuses a nonce seen before within the age window (one guard per subscription: several
 * subscribers in one process each legitimately receive the same message once).
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();

  /** True the first time a nonce is seen; remembers it until it is too old to pass the age check anyway. */
  firstSight(nonce: string, atMs: number, windowMs: number, now = Date.now()): boolean {
    for (const [old, expires] of this.seen) {
      if (expires > now) break;
      this.seen.delete(old);
    }
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, Math.max(atMs, now) + windowMs);
    return true;
  }
}
