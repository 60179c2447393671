// [bus.identities] / [bus.signing]: all four owning services' public keys or none, and a seed
// only for a service whose public key is configured (else its messages could never verify).
import type { ConfigIssue } from './issues';
import type { DbproxyConfig } from './schema/root';

const OWNERS = ['config_api', 'bgd_monitor', 'mysql_edge', 'xa_coordinator'] as const;

export function checkBusIdentities(c: DbproxyConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const { identities, signing } = c.bus;
  const configured = OWNERS.filter((o) => identities[o] !== undefined);
  if (configured.length > 0) {
    for (const o of OWNERS) {
      if (identities[o] === undefined) issues.push({ path: `bus.identities.${o}`, message: `missing: with [bus.identities] set, every owning service (${OWNERS.join(', ')}) needs its public key, else its messages are refused` });
    }
  }
  for (const o of OWNERS) {
    const seed = signing[`${o}_seed`] || undefined; // empty: none ("${VAR:-}" of a process without it)
    const file = signing[`${o}_seed_file`];
    if (seed !== undefined && file !== undefined) issues.push({ path: `bus.signing.${o}_seed_file`, message: `set ${o}_seed or ${o}_seed_file, not both` });
    if ((seed !== undefined || file !== undefined) && identities[o] === undefined) issues.push({ path: `bus.signing.${o}_seed${seed === undefined ? '_file' : ''}`, message: `bus.identities.${o} (its public key) is not set: receivers could not verify what this seed signs` });
  }
  return issues;
}
