// Which identities a bus handle signs and verifies with. Set explicitly (the runtime does, from
// [bus.identities] and [bus.signing]); else an embedded bus uses the process's automatic keys
// (every service on it runs in this process, so a fresh key pair per owning service is enough),
// and a NATS bus without identities sends and accepts signed kinds unsigned (validate warns).
import type { Bus } from '../types';
import { BusIdentities } from './bus-identities';
import { generateServiceKey } from './service-keys';

/** Default replay window for signed messages (bus.signing.max_age_seconds). */
export const DEFAULT_SIGNED_MAX_AGE_MS = 30_000;

const explicit = new WeakMap<Bus, BusIdentities>();
let automatic: BusIdentities | undefined;
let automaticServices: readonly string[] = [];

/** Makes `bus` sign with and verify against `identities` from now on. */
export function useIdentities(bus: Bus, identities: BusIdentities): void {
  explicit.set(bus, identities);
}

/** The services the catalogue's signed kinds belong to (set once by the catalogue). */
export function registerSigningServices(services: readonly string[]): void {
  automaticServices = services;
}

function automaticIdentities(): BusIdentities {
  if (!automatic) {
    const keys = automaticServices.map((service) => [service, generateServiceKey()] as const);
    automatic = BusIdentities.create({
      trusted: Object.fromEntries(keys.map(([s, k]) => [s, k.publicKey])),
      seeds: Object.fromEntries(keys.map(([s, k]) => [s, k.seed])),
      maxAgeMs: DEFAULT_SIGNED_MAX_AGE_MS,
    });
  }
  return automatic;
}

/** What `bus` signs and verifies with; undefined = signing off (NATS without [bus.identities]). */
export function identitiesOf(bus: Bus): BusIdentities | undefined {
  return explicit.get(bus) ?? (bus.kind === 'embedded' ? automaticIdentities() : undefined);
}
