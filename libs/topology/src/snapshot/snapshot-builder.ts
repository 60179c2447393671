// Builds the shards of a topology snapshot from the targets, their placement after blue/green
// actions, their health, and (Redis Cluster) the slot ranges each shard serves.
import type { TopologyShard } from '@dbproxy/bus';
import type { BackendHealth } from '../health/backend-health';
import type { BackendTarget } from '../targets';
import type { Placement } from './bgd-overlay';

export type SlotRanges = readonly (readonly [number, number])[];

export function buildShards(
  targets: readonly BackendTarget[],
  placements: ReadonlyMap<string, Placement>,
  health: ReadonlyMap<string, BackendHealth>,
  slots: ReadonlyMap<string, SlotRanges>,
): TopologyShard[] {
  const shards = new Map<string, TopologyShard>();
  for (const t of targets) {
    const placement = placements.get(t.name);
    if (!placement) continue;
    let shard = shards.get(placement.shard);
    if (!shard) {
      const ranges = slots.get(placement.shard);
      shard = { shard: placement.shard, ...(ranges ? { slots: ranges.map(([a, b]): [number, number] => [a, b]) } : {}), backends: [] };
      shards.set(placement.shard, shard);
    }
    const h = health.get(t.name);
    shard.backends.push({
      name: t.name,
      address: t.address,
      role: placement.role,
      weight: t.weight,
      healthy: h?.up ?? false,
      lagging: placement.role === 'replica' && (h?.lagVerdict.lagging ?? false),
      shunned: placement.shunned,
      draining: placement.draining,
      status: t.status,
      dnsPin: placement.dnsPin,
      ...(placement.servesReads ? { servesReads: true } : {}),
    });
  }
  return [...shards.values()];
}
