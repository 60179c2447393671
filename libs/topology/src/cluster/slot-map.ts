// Redis Cluster layout from CLUSTER SHARDS (Redis 7+) or CLUSTER SLOTS (older servers): the
// shards, the slot ranges each serves, and their nodes.
import { TopologyErrors } from '../errors';

export interface ClusterNode {
  readonly id: string;
  readonly address: string;
  readonly role: 'primary' | 'replica';
}

export interface ClusterShard {
  /** The shard-id where the server gives one (Redis 7.2+), else its primary's node id. */
  readonly name: string;
  readonly slots: readonly (readonly [number, number])[];
  readonly nodes: readonly ClusterNode[];
}

export interface ClusterLayout {
  readonly shards: readonly ClusterShard[];
}

const malformed = (command: string, detail: string) => TopologyErrors.unexpectedReply(command, 'the cluster', detail);

/** A RESP2 flat `[key, value, key, value]` array as a record. */
function fields(entry: unknown, command: string): Record<string, unknown> {
  if (!Array.isArray(entry) || entry.length % 2 !== 0) throw malformed(command, 'expected key/value pairs');
  const record: Record<string, unknown> = {};
  for (let i = 0; i < entry.length; i += 2) record[String(entry[i])] = entry[i + 1];
  return record;
}

const formatAddress = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

function nodeFromShards(entry: unknown): ClusterNode {
  const f = fields(entry, 'CLUSTER SHARDS');
  const endpoint = String(f['endpoint'] ?? '');
  const host = endpoint !== '' && endpoint !== '?' ? endpoint : String(f['ip'] ?? '');
  const port = Number(f['port'] ?? 0) || Number(f['tls-port'] ?? 0);
  if (!host || !port || typeof f['id'] !== 'string') throw malformed('CLUSTER SHARDS', `node without id, host or port: ${JSON.stringify(entry)}`);
  return { id: f['id'], address: formatAddress(host, port), role: f['role'] === 'master' ? 'primary' : 'replica' };
}

/** Merges touching ranges and sorts them. */
function normalizeRanges(ranges: (readonly [number, number])[]): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [first, last] of sorted) {
    const tail = merged[merged.length - 1];
    if (tail && first <= tail[1] + 1) tail[1] = Math.max(tail[1], last);
    else merged.push([first, last]);
  }
  return merged;
}

const byFirstSlot = (a: ClusterShard, b: ClusterShard) => (a.slots[0]?.[0] ?? 0) - (b.slots[0]?.[0] ?? 0);

export function parseClusterShards(reply: unknown): ClusterLayout {
  if (!Array.isArray(reply)) throw malformed('CLUSTER SHARDS', 'expected an array of shards');
  const shards: ClusterShard[] = [];
  for (const entry of reply) {
    const f = fields(entry, 'CLUSTER SHARDS');
    const flat = Array.isArray(f['slots']) ? f['slots'].map(Number) : [];
    const ranges: [number, number][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) ranges.push([flat[i] as number, flat[i + 1] as number]);
    const nodes = (Array.isArray(f['nodes']) ? f['nodes'] : []).map(nodeFromShards);
    const primary = nodes.find((n) => n.role === 'primary');
    if (ranges.length === 0 || !primary) continue; // a node without slots serves nothing yet
    const shardId = typeof f['id'] === 'string' ? f['id'] : typeof f['shard-id'] === 'string' ? f['shard-id'] : primary.id;
    shards.push({ name: shardId, slots: normalizeRanges(ranges), nodes: [primary, ...nodes.filter((n) => n !== primary)] });
  }
  return { shards: shards.sort(byFirstSlot) };
}

function nodeFromSlots(entry: unknown, role: ClusterNode['role']): ClusterNode {
  if (!Array.isArray(entry) || entry.length < 3) throw malformed('CLUSTER SLOTS', `bad node entry ${JSON.stringify(entry)}`);
  const [host, port, id] = entry as [unknown, unknown, unknown];
  return { id: String(id), address: formatAddress(String(host), Number(port)), role };
}

export function parseClusterSlots(reply: unknown): ClusterLayout {
  if (!Array.isArray(reply)) throw malformed('CLUSTER SLOTS', 'expected an array of slot ranges');
  const byPrimary = new Map<string, { ranges: [number, number][]; nodes: Map<string, ClusterNode> }>();
  for (const range of reply) {
    if (!Array.isArray(range) || range.length < 3) throw malformed('CLUSTER SLOTS', `bad range ${JSON.stringify(range)}`);
    const [first, last, primaryEntry, ...replicaEntries] = range as [unknown, unknown, unknown, ...unknown[]];
    const primary = nodeFromSlots(primaryEntry, 'primary');
    const shard = byPrimary.get(primary.id) ?? { ranges: [], nodes: new Map([[primary.id, primary]]) };
    shard.ranges.push([Number(first), Number(last)]);
    for (const replica of replicaEntries.map((e) => nodeFromSlots(e, 'replica'))) shard.nodes.set(replica.id, replica);
    byPrimary.set(primary.id, shard);
  }
  const shards = [...byPrimary].map(([id, s]) => ({ name: id, slots: normalizeRanges(s.ranges), nodes: [...s.nodes.values()] }));
  return { shards: shards.sort(byFirstSlot) };
}
