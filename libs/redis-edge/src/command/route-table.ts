// Where each key goes right now: Redis Cluster slots from the topology snapshot (patched at once
// by MOVED), or standalone shards by the [redis.sharding] map; primaries for writes, usable
// replicas for the read-only listener. Rebuilt when topology or configuration changes.
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import { crc16, shardMapFromSettings, type ShardMap } from '@dbproxy/routing';
import type { BackendState, TopologyView } from '@dbproxy/topology-client';
import { endpointKey, type NodeEndpoint } from '../io/endpoint';
import type { EndpointRoute, LinkDirectory } from './link-directory';

export const SLOT_COUNT = 16384;
/** Group of a key that maps to no shard. */
export const UNMAPPED = -1;

const OPEN_BRACE = 0x7b; // '{'
const CLOSE_BRACE = 0x7d; // '}'

/** Start and end of the part of a key that is hashed: the hash tag `{...}` when there is a non-empty one. */
export function hashedPart(buf: Uint8Array, offset: number, length: number): [number, number] {
  const end = offset + length;
  for (let i = offset; i < end; i++) {
    if (buf[i] !== OPEN_BRACE) continue;
    for (let j = i + 1; j < end; j++) {
      if (buf[j] === CLOSE_BRACE) return j > i + 1 ? [i + 1, j] : [offset, end];
    }
    return [offset, end];
  }
  return [offset, end];
}

/** Redis Cluster slot of the key `buf[offset, offset + length)` (CRC16 of its hash tag or whole key). */
export function slotOfKey(buf: Uint8Array, offset: number, length: number): number {
  const [start, end] = hashedPart(buf, offset, length);
  return crc16(buf, start, end) & (SLOT_COUNT - 1);
}

export interface ShardRoutes {
  readonly name: string;
  readonly primary: EndpointRoute | undefined;
  readonly replicas: readonly { readonly route: EndpointRoute; readonly weight: number }[];
}

export class RouteTable {
  readonly cluster: boolean;
  readonly shards: readonly ShardRoutes[];
  /** Standalone: every key goes to the one shard, so keys need not be read. */
  readonly single: boolean;
  /** Keyless commands and the pub/sub home: the default shard, or slot 0's owner. */
  readonly home: number;
  /** Cluster: the primary serving each slot (MOVED patches it before topology catches up). */
  readonly slotRoutes: (EndpointRoute | undefined)[];
  /** Cluster: the shard index serving each slot (-1: none). */
  readonly slotShard: Int16Array;
  private readonly shardMap: ShardMap | undefined;
  private readonly shardIndex: ReadonlyMap<string, number>;

  constructor(init: { cluster: boolean; shards: ShardRoutes[]; home: number; shardMap: ShardMap | undefined; slotRoutes?: (EndpointRoute | undefined)[]; slotShard?: Int16Array }) {
    this.cluster = init.cluster;
    this.shards = init.shards;
    this.home = init.home;
    this.shardMap = init.shardMap;
    this.shardIndex = new Map(init.shards.map((s, i) => [s.name, i]));
    this.single = !init.cluster && init.shards.length <= 1;
    this.slotRoutes = init.slotRoutes ?? [];
    this.slotShard = init.slotShard ?? new Int16Array(0);
  }

  /** The routing group of a key: its slot (cluster) or its shard index (standalone; UNMAPPED when none). */
  groupOfKey(buf: Buffer, offset: number, length: number): number {
    if (this.cluster) return slotOfKey(buf, offset, length);
    if (this.single || !this.shardMap) return this.home;
    const [start, end] = hashedPart(buf, offset, length);
    const shard = this.shardMap.shardFor(buf.toString('utf8', start, end));
    return shard === undefined ? UNMAPPED : (this.shardIndex.get(shard) ?? UNMAPPED);
  }

  /** The shard index of a group. */
  shardOfGroup(group: number): number {
    return this.cluster ? this.slotShard[group] : group;
  }

  /** The primary route of a group (undefined: no usable primary). */
  primaryOfGroup(group: number): EndpointRoute | undefined {
    if (this.cluster) return this.slotRoutes[group];
    return this.shards[group]?.primary;
  }

  /** The name of the shard serving a group, for error texts (a cluster slot no shard owns: `slot N`). */
  nameOfGroup(group: number): string {
    const shard = this.shards[this.shardOfGroup(group)];
    return shard ? shard.name : this.cluster ? `slot ${group}` : `#${group}`;
  }

  /** The name of the shard at `index` (the home shard when omitted). */
  shardName(index = this.home): string {
    return this.shards[index]?.name ?? `#${index}`;
  }

  /** The name of the first shard without a route in `byShard` (indexed by shard), for error texts. */
  missingShard(byShard: readonly (EndpointRoute | undefined)[]): string {
    return this.shardName(Math.max(0, byShard.findIndex((r) => r === undefined)));
  }

  shardIndexOf(name: string): number {
    return this.shardIndex.get(name) ?? UNMAPPED;
  }

  /** Every shard primary once (cluster-wide commands), in shard order. */
  primaries(): EndpointRoute[] {
    const out: EndpointRoute[] = [];
    for (const shard of this.shards) if (shard.primary && !out.includes(shard.primary)) out.push(shard.primary);
    return out;
  }
}

/** How the configured backends and cluster credentials become endpoints. */
export class RouteTableBuilder {
  constructor(private readonly links: LinkDirectory) {}

  build(config: DeepReadonly<DbproxyConfig>, view: TopologyView): RouteTable {
    return config.redis.cluster.enabled ? this.buildCluster(config, view) : this.buildSharded(config, view);
  }

  /** An endpoint for a node only a redirect named (not yet in the topology snapshot). */
  endpointAt(config: DeepReadonly<DbproxyConfig>, view: TopologyView, address: string): EndpointRoute {
    for (const b of view.backends()) if (b.connectAddress === address || b.address === address) return this.links.route(this.clusterEndpoint(config, b));
    const c = config.redis.cluster;
    return this.links.route({ key: endpointKey(address, 0, false), name: address, shard: '', address, role: 'primary', db: 0, username: c.username, password: c.password, readOnly: false });
  }

  private buildSharded(config: DeepReadonly<DbproxyConfig>, view: TopologyView): RouteTable {
    const sharding = config.redis.sharding;
    const shardMap = sharding.map ? shardMapFromSettings(sharding.map) : undefined;
    const names = shardMap ? [...shardMap.shards] : [sharding.default_shard];
    if (!names.includes(sharding.default_shard) && config.redis_backends.some((b) => b.shard === sharding.default_shard)) names.push(sharding.default_shard);
    const byName = new Map(config.redis_backends.map((b) => [b.name, b]));
    const endpoint = (state: BackendState): NodeEndpoint | undefined => {
      const b = byName.get(state.name);
      if (!b) return undefined;
      return { key: endpointKey(state.connectAddress, b.db, false), name: b.name, shard: b.shard, address: state.connectAddress, role: state.role, db: b.db, username: b.username, password: b.password, readOnly: false, tls: b.tls };
    };
    const shards = names.map((name) => this.shardRoutes(name, view, endpoint));
    const home = Math.max(0, names.indexOf(sharding.default_shard));
    return new RouteTable({ cluster: false, shards, home, shardMap });
  }

  private buildCluster(config: DeepReadonly<DbproxyConfig>, view: TopologyView): RouteTable {
    const slotted = (view.snapshot?.shards ?? []).filter((s) => s.slots && s.slots.length > 0);
    const shards = slotted.map((s) => this.shardRoutes(s.shard, view, (state) => this.clusterEndpoint(config, state)));
    const index = new Map(slotted.map((s, i) => [s.shard, i]));
    const slotRoutes = new Array<EndpointRoute | undefined>(SLOT_COUNT).fill(undefined);
    const slotShard = new Int16Array(SLOT_COUNT).fill(-1);
    for (let slot = 0; slot < SLOT_COUNT; slot++) {
      const owner = view.slotOwner(slot);
      if (!owner) continue;
      const i = index.get(owner.shard) ?? -1;
      slotShard[slot] = i;
      slotRoutes[slot] = i >= 0 ? (shards[i].primary ?? this.links.route(this.clusterEndpoint(config, owner))) : this.links.route(this.clusterEndpoint(config, owner));
    }
    return new RouteTable({ cluster: true, shards, home: Math.max(0, slotShard[0]), shardMap: undefined, slotRoutes, slotShard });
  }

  private clusterEndpoint(config: DeepReadonly<DbproxyConfig>, state: BackendState): NodeEndpoint {
    const c = config.redis.cluster;
    const readOnly = state.role === 'replica';
    return { key: endpointKey(state.connectAddress, 0, readOnly), name: state.name, shard: state.shard, address: state.connectAddress, role: state.role, db: 0, username: c.username, password: c.password, readOnly };
  }

  private shardRoutes(name: string, view: TopologyView, endpoint: (s: BackendState) => NodeEndpoint | undefined): ShardRoutes {
    const primaryState = view.usable(name, 'primary')[0];
    const primaryEndpoint = primaryState ? endpoint(primaryState) : undefined;
    const replicas = view.usable(name, 'replica').flatMap((state) => {
      const e = endpoint(state);
      return e ? [{ route: this.links.route(e), weight: state.weight }] : [];
    });
    return { name, primary: primaryEndpoint ? this.links.route(primaryEndpoint) : undefined, replicas };
  }
}
