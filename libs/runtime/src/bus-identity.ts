// Sender identity for this process's bus, from [bus.identities] and [bus.signing]: the public
// keys of the owning services and the seeds of the services this process runs. Without
// [bus.identities]: the embedded bus signs with automatic per-process keys; NATS sends and
// accepts signed kinds unsigned, and start-up warns.
import { readFileSync } from 'node:fs';
import { BusIdentities, SIGNING_SERVICES, useIdentities, type Bus } from '@dbproxy/bus';
import type { DbproxyConfig } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import { createError, errorMessage } from '@dbproxy/util';

export const BusIdentityErrors = {
  /** A service this process runs owns signed messages but [bus.signing] holds no seed for it, or a key is unusable. */
  invalid: createError<[string]>('DBP_ERR_BUS_IDENTITY_CONFIG', 'bus identity: %s'),
} as const;

// Keys read here: bus.identities.{config_api, bgd_monitor, mysql_edge, xa_coordinator};
// bus.signing.{config_api_seed, bgd_monitor_seed, mysql_edge_seed, xa_coordinator_seed},
// the same with _seed_file (config_api_seed_file, bgd_monitor_seed_file, mysql_edge_seed_file,
// xa_coordinator_seed_file), and max_age_seconds.
type Identities = DbproxyConfig['bus']['identities'];
type Signing = DbproxyConfig['bus']['signing'];
const keyOf = (service: string) => service.replace('-', '_') as keyof Identities;

function seedOf(signing: Signing, service: string): string | undefined {
  const key = keyOf(service);
  const literal = signing[`${key}_seed`];
  // "${VAR:-}" of a process that does not run the service expands to nothing: no seed here
  if (literal !== undefined && literal !== '') return literal;
  const file = signing[`${key}_seed_file`];
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw BusIdentityErrors.invalid(`bus.signing.${key}_seed_file: cannot read ${file}: ${errorMessage(err)}`);
  }
}

/** Attaches the configured identities to `bus`; throws DBP_ERR_BUS_IDENTITY_CONFIG when a service run here cannot sign. */
export function applyBusIdentities(bus: Bus, config: DbproxyConfig, services: readonly string[], logger: Logger): void {
  const { identities, signing } = config.bus;
  const trusted = Object.fromEntries(SIGNING_SERVICES.flatMap((s) => (identities[keyOf(s)] ? [[s, identities[keyOf(s)] as string]] : [])));
  if (Object.keys(trusted).length === 0) {
    if (bus.kind === 'nats') logger.warn({ subjects: ['dbproxy.bgd.actions', 'dbproxy.xa.execute', 'KV dbproxy-config'] }, 'bus messages that change placement or data are not signed: set [bus.identities] and [bus.signing] (see README "Bus sender identity")');
    return;
  }
  const seeds: Record<string, string> = {};
  for (const service of SIGNING_SERVICES) {
    const seed = seedOf(signing, service);
    if (seed !== undefined) seeds[service] = seed;
    else if (services.includes(service)) throw BusIdentityErrors.invalid(`this process runs ${service}, which signs its messages: set bus.signing.${keyOf(service)}_seed (or _seed_file)`);
  }
  try {
    useIdentities(bus, BusIdentities.create({ trusted, seeds, maxAgeMs: signing.max_age_seconds * 1000 }));
  } catch (err) {
    throw BusIdentityErrors.invalid(errorMessage(err));
  }
  logger.info({ signsFor: Object.keys(seeds), maxAgeSeconds: signing.max_age_seconds }, 'bus sender identity on');
}
