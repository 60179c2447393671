// CLUSTER SLOTS and CLUSTER SHARDS replies as slot ranges and nodes.
import { UnexpectedReplyShape } from './errors';
import { field, fieldsOf, integerOf, itemsOf, optionalText, textOf } from './reply-shapes';
import type { RespValue } from './value';

export interface ClusterNodeAddress {
  readonly host: string;
  readonly port: number;
  readonly id?: string;
  /** Redis 7+ metadata, e.g. `hostname`. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface SlotRange {
  readonly start: number;
  readonly end: number;
  readonly master: ClusterNodeAddress;
  readonly replicas: readonly ClusterNodeAddress[];
}

export interface ClusterShardNode {
  readonly id: string;
  readonly ip: string;
  readonly endpoint: string;
  readonly hostname?: string;
  readonly port?: number;
  readonly tlsPort?: number;
  readonly role: string;
  readonly replicationOffset: number;
  readonly health: string;
}

export interface ClusterShard {
  readonly slots: ReadonlyArray<readonly [number, number]>;
  readonly nodes: readonly ClusterShardNode[];
}

const SLOTS_CONTEXT = 'CLUSTER SLOTS';
const SHARDS_CONTEXT = 'CLUSTER SHARDS';

function slotNode(v: RespValue): ClusterNodeAddress {
  const items = itemsOf(v, SLOTS_CONTEXT);
  if (items.length < 2) throw UnexpectedReplyShape(SLOTS_CONTEXT, 'node entry shorter than [host, port]');
  const metadata: Record<string, string> = {};
  if (items.length > 3) for (const [key, val] of fieldsOf(items[3], SLOTS_CONTEXT)) metadata[key] = textOf(val, SLOTS_CONTEXT);
  const id = items.length > 2 ? textOf(items[2], SLOTS_CONTEXT) : undefined;
  return { host: textOf(items[0], SLOTS_CONTEXT), port: integerOf(items[1], SLOTS_CONTEXT), ...(id === undefined ? {} : { id }), metadata };
}

/** `CLUSTER SLOTS`: `[[start, end, [host, port, id, {meta}], ...replicas], ...]`. */
export function parseClusterSlots(v: RespValue): SlotRange[] {
  return itemsOf(v, SLOTS_CONTEXT).map((entry) => {
    const items = itemsOf(entry, SLOTS_CONTEXT);
    if (items.length < 3) throw UnexpectedReplyShape(SLOTS_CONTEXT, 'slot range without a master');
    return {
      start: integerOf(items[0], SLOTS_CONTEXT),
      end: integerOf(items[1], SLOTS_CONTEXT),
      master: slotNode(items[2]),
      replicas: items.slice(3).map(slotNode),
    };
  });
}

function shardNode(v: RespValue): ClusterShardNode {
  const f = fieldsOf(v, SHARDS_CONTEXT);
  const port = f.get('port');
  const tlsPort = f.get('tls-port');
  const hostname = optionalText(f, 'hostname', SHARDS_CONTEXT);
  return {
    id: textOf(field(f, 'id', SHARDS_CONTEXT), SHARDS_CONTEXT),
    ip: textOf(field(f, 'ip', SHARDS_CONTEXT), SHARDS_CONTEXT),
    endpoint: textOf(field(f, 'endpoint', SHARDS_CONTEXT), SHARDS_CONTEXT),
    ...(hostname === undefined ? {} : { hostname }),
    ...(port === undefined ? {} : { port: integerOf(port, SHARDS_CONTEXT) }),
    ...(tlsPort === undefined ? {} : { tlsPort: integerOf(tlsPort, SHARDS_CONTEXT) }),
    role: textOf(field(f, 'role', SHARDS_CONTEXT), SHARDS_CONTEXT),
    replicationOffset: integerOf(field(f, 'replication-offset', SHARDS_CONTEXT), SHARDS_CONTEXT),
    health: textOf(field(f, 'health', SHARDS_CONTEXT), SHARDS_CONTEXT),
  };
}

/** `CLUSTER SHARDS` (Redis 7+): each shard's slot ranges and nodes. */
export function parseClusterShards(v: RespValue): ClusterShard[] {
  return itemsOf(v, SHARDS_CONTEXT).map((entry) => {
    const f = fieldsOf(entry, SHARDS_CONTEXT);
    const bounds = itemsOf(field(f, 'slots', SHARDS_CONTEXT), SHARDS_CONTEXT).map((b) => integerOf(b, SHARDS_CONTEXT));
    if (bounds.length % 2 !== 0) throw UnexpectedReplyShape(SHARDS_CONTEXT, 'odd number of slot bounds');
    const slots: Array<readonly [number, number]> = [];
    for (let i = 0; i < bounds.length; i += 2) slots.push([bounds[i], bounds[i + 1]]);
    return { slots, nodes: itemsOf(field(f, 'nodes', SHARDS_CONTEXT), SHARDS_CONTEXT).map(shardNode) };
  });
}
