// One topology snapshot indexed for the questions edges ask on every query, each answered in O(1).
import type { BackendRole, BackendStatus, Protocol, TopologySnapshot } from '@dbproxy/bus';

/** Redis Cluster hash slots (CRC16 mod 16384). */
export const CLUSTER_SLOT_COUNT = 16_384;

/** One backend as the current snapshot describes it. */
export interface BackendState {
  readonly name: string;
  readonly shard: string;
  /** The role in force: the configured one, or the one a blue/green `move-writer` gave it. */
  readonly role: BackendRole;
  /** The configured `host:port`. */
  readonly address: string;
  /** Where new connections go: the DNS-pinned `ip:port` during a switchover, else `address`. */
  readonly connectAddress: string;
  readonly weight: number;
  /** Passed its health checks (failures_before_down / successes_before_up hysteresis). */
  readonly healthy: boolean;
  /** A replica whose lag exceeds max_replica_lag_seconds, or whose replication stopped. */
  readonly lagging: boolean;
  readonly shunned: boolean;
  /** Existing connections are being retired (blue/green drain); see `usable`. */
  readonly draining: boolean;
  /** The configured status (`online` when the snapshot has none): offline backends take no new work. */
  readonly status: BackendStatus;
  readonly dnsPin: string | null;
  /** A primary lent to the shard's readers during a blue/green switchover. */
  readonly servesReads?: boolean;
}

interface ShardIndex {
  readonly primary: BackendState | undefined;
  readonly usablePrimaries: readonly BackendState[];
  readonly usableReplicas: readonly BackendState[];
}

const NONE: readonly BackendState[] = Object.freeze([]);

/** `host:port` with the host replaced by a pinned IP (IPv6 in brackets). */
export function pinnedAddress(address: string, pin: string | null): string {
  if (pin === null) return address;
  const port = address.slice(address.lastIndexOf(':') + 1);
  return pin.includes(':') ? `[${pin}]:${port}` : `${pin}:${port}`;
}

/**
 * TEST ONLY (`proxy.test_hosts`): `host:port` with the host answered by the configured map, which
 * stands in for DNS where DNS cannot be changed (the blue/green simulator); unchanged otherwise.
 */
export function testHostAddress(address: string, hosts: Readonly<Record<string, string>>): string {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).toLowerCase();
  const ip = hosts[host];
  return ip === undefined ? address : pinnedAddress(address, ip);
}

/** Replicas (and a primary lent to the readers) serve reads only when online, healthy, caught up, not shunned and not draining. */
function usableReplica(b: BackendState): boolean {
  if (b.role === 'primary') return b.servesReads === true && b.status === 'online' && b.healthy && !b.shunned;
  return b.role === 'replica' && b.status === 'online' && b.healthy && !b.lagging && !b.shunned && !b.draining;
}

/**
 * An offline primary (offline_soft or offline_hard) is not: new sessions get the shard's
 * no-backend error. A draining primary stays usable: there is no other writer for its shard, and draining means its
 * existing connections are retired (new ones go to `connectAddress`), not that writes stop.
 */
function usablePrimary(b: BackendState): boolean {
  return b.role === 'primary' && b.status === 'online' && b.healthy && !b.shunned;
}

export class TopologyView {
  readonly protocol: Protocol;
  /** 0 before the first snapshot. */
  readonly generation: number;
  readonly epoch: number;
  readonly publishedAt: string | undefined;
  readonly snapshot: TopologySnapshot | undefined;
  private readonly shardIndex = new Map<string, ShardIndex>();
  private readonly byName = new Map<string, BackendState>();
  private readonly slots: (BackendState | undefined)[] | undefined;
  /** Shard primaries that are not healthy (or shards without one), in snapshot order. */
  readonly primariesDown: readonly { readonly shard: string; readonly backend: BackendState | undefined }[];

  private constructor(protocol: Protocol, snapshot: TopologySnapshot | undefined) {
    this.protocol = protocol;
    this.snapshot = snapshot;
    this.generation = snapshot?.generation ?? 0;
    this.epoch = snapshot?.epoch ?? 0;
    this.publishedAt = snapshot?.publishedAt;
    const down: { shard: string; backend: BackendState | undefined }[] = [];
    let slots: (BackendState | undefined)[] | undefined;
    for (const shard of snapshot?.shards ?? []) {
      const backends = shard.backends.map((b) => Object.freeze({ ...b, status: b.status ?? 'online', shard: shard.shard, connectAddress: pinnedAddress(b.address, b.dnsPin) }));
      for (const b of backends) this.byName.set(b.name, b);
      const primary = backends.find((b) => b.role === 'primary');
      this.shardIndex.set(shard.shard, {
        primary,
        usablePrimaries: Object.freeze(backends.filter(usablePrimary)),
        usableReplicas: Object.freeze(backends.filter(usableReplica)),
      });
      if (!primary?.healthy) down.push({ shard: shard.shard, backend: primary });
      if (shard.slots && primary) {
        slots ??= new Array<BackendState | undefined>(CLUSTER_SLOT_COUNT).fill(undefined);
        for (const [first, last] of shard.slots) slots.fill(primary, first, last + 1);
      }
    }
    this.slots = slots;
    this.primariesDown = Object.freeze(down);
  }

  static empty(protocol: Protocol): TopologyView {
    return new TopologyView(protocol, undefined);
  }

  static of(snapshot: TopologySnapshot): TopologyView {
    return new TopologyView(snapshot.protocol, snapshot);
  }

  /** Backends of `shard` that may take new work in `role` right now (precomputed). */
  usable(shard: string, role: BackendRole): readonly BackendState[] {
    const index = this.shardIndex.get(shard);
    if (!index) return NONE;
    return role === 'primary' ? index.usablePrimaries : index.usableReplicas;
  }

  /** The shard's primary whatever its health (undefined for an unknown shard). */
  primary(shard: string): BackendState | undefined {
    return this.shardIndex.get(shard)?.primary;
  }

  backend(name: string): BackendState | undefined {
    return this.byName.get(name);
  }

  /** Every backend, in snapshot order. */
  backends(): IterableIterator<BackendState> {
    return this.byName.values();
  }

  shards(): string[] {
    return [...this.shardIndex.keys()];
  }

  /** Redis Cluster: the primary serving `slot`, or undefined when no shard claims it. */
  slotOwner(slot: number): BackendState | undefined {
    return this.slots?.[slot];
  }
}
