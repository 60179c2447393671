// Read-only suppression (spec 001 "Read-Only Suppression"): while a blue/green deployment is in
// WRITER_SWITCHOVER_INITIATED, _IN_PROGRESS or _POST_PROCESSING, the ordinary read_only / replication
// observations of its endpoints do not move placement (a replica's lag verdict is kept). Keys are
// `host:port`, owned per deployment; cleanup erases exactly the keys that deployment inserted.
import type { BgdPhase, BgdState } from '@dbproxy/bus';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

type Config = DeepReadonly<DbproxyConfig>;
const SUPPRESSING: ReadonlySet<BgdPhase> = new Set(['WRITER_SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_IN_PROGRESS', 'WRITER_SWITCHOVER_POST_PROCESSING']);

export const endpointKey = (address: string): string => address.toLowerCase();

/** The `host:port` keys of every backend the deployment names (blue and green, writer and readers). */
function ownedKeys(config: Config, deployment: string): Set<string> {
  const row = config.bgd_deployments.find((d) => d.name === deployment);
  if (!row) return new Set();
  const names = [row.blue_writer, ...row.blue_readers, ...(row.green_writer ? [row.green_writer] : []), ...row.green_readers];
  return new Set(config.mysql_backends.filter((b) => names.includes(b.name)).map((b) => endpointKey(b.address)));
}

export class ReadOnlySuppression {
  private readonly owned = new Map<string, Set<string>>();

  /** Follows one phase change; true when the suppressed keys changed. */
  follow(state: BgdState, config: Config): boolean {
    if (SUPPRESSING.has(state.phase)) {
      if (this.owned.has(state.deployment)) return false;
      this.owned.set(state.deployment, ownedKeys(config, state.deployment));
      return true;
    }
    return this.owned.delete(state.deployment);
  }

  /** A configuration change while suppression is active: old keys cleared, the new hostgroups' keys suppressed. */
  reconfigure(config: Config): void {
    for (const deployment of this.owned.keys()) this.owned.set(deployment, ownedKeys(config, deployment));
  }

  /** Checked when a result is applied, not only when its check was admitted. */
  suppressed(address: string): boolean {
    const key = endpointKey(address);
    for (const keys of this.owned.values()) if (keys.has(key)) return true;
    return false;
  }

  describe(): Record<string, string[]> {
    return Object.fromEntries([...this.owned].map(([d, keys]) => [d, [...keys]]));
  }
}
