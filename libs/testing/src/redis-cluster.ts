// A real Redis Cluster: masters sharing the 16384 slots, optional replicas, formed with CLUSTER commands.
import { ClusterNotReady, InvalidOption } from './errors';
import { settleAll, startGroup, type ServerGroup } from './group';
import { freeClusterPort } from './ports';
import type { ServerLaunch } from './server-process';
import { checkPassword, RedisNode, redisInfo, startRedisNode, withRedis, type RedisServer } from './redis';
import { waitFor } from './wait';

export interface RedisClusterOptions {
  /** Masters sharing the slots (default 3). */
  masters?: number;
  /** Replicas of each master (default 0). */
  replicasPerMaster?: number;
  /** requirepass and masterauth on every node. */
  password?: string;
  /** cluster-node-timeout: how soon a dead node is marked failed and a replica takes over (default 2000). */
  nodeTimeoutMs?: number;
}

/** A node of the cluster; `slots` and `replicaOf` describe the layout it was created with. */
export interface RedisClusterNode extends RedisServer {
  readonly nodeId: string;
  /** The [first, last] slots given to this master at creation; undefined for replicas. */
  readonly slots: readonly [number, number] | undefined;
  /** The nodeId of the master this node was created to replicate; undefined for masters. */
  readonly replicaOf: string | undefined;
}

export interface RedisCluster {
  /** Every node, masters first. Roles are those at creation; failovers change them on the servers. */
  readonly nodes: readonly RedisClusterNode[];
  readonly masters: readonly RedisClusterNode[];
  readonly replicas: readonly RedisClusterNode[];
  /** The run directory holding every node's files. */
  readonly dir: string;
  /** Resolves when every running node reports cluster_state:ok with all 16384 slots served. */
  waitForClusterOk(options?: { timeoutMs?: number }): Promise<void>;
  /** Ends every node quickly and deletes all files; safe to call more than once. */
  destroy(): Promise<void>;
}

export const CLUSTER_SLOTS = 16_384;

class ClusterNode extends RedisNode implements RedisClusterNode {
  nodeId = '';
  slots: readonly [number, number] | undefined;
  replicaOf: string | undefined;
}

function call(node: RedisServer, ...args: string[]): Promise<unknown> {
  return withRedis(node, (client) => client.call(args[0], ...args.slice(1)));
}

/** One CLUSTER NODES line: id, flags, the id of its master ('-' for masters). */
interface NodeLine {
  id: string;
  flags: string[];
  masterId: string;
}

async function clusterNodes(node: RedisServer): Promise<NodeLine[]> {
  const text = String(await call(node, 'CLUSTER', 'NODES'));
  return text
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .map(([id, , flags, masterId]) => ({ id, flags: flags.split(','), masterId }));
}

/** True when `node` sees the whole layout: every node, no handshakes, each replica under its master. */
async function seesLayout(node: ClusterNode, all: readonly ClusterNode[], withReplicas: boolean): Promise<boolean> {
  const lines = await clusterNodes(node);
  const settled = lines.every((l) => !l.flags.includes('handshake') && !l.flags.includes('noaddr'));
  if (lines.length !== all.length || !settled) return false;
  if (!withReplicas) return true;
  const underMaster = (n: ClusterNode): boolean =>
    lines.some((l) => l.id === n.nodeId && l.masterId === n.replicaOf && l.flags.includes('slave'));
  return all.every((n) => n.replicaOf === undefined || underMaster(n));
}

async function clusterOk(node: RedisServer): Promise<boolean> {
  const info = String(await call(node, 'CLUSTER', 'INFO'));
  const fields = Object.fromEntries(info.split('\r\n').map((line) => line.split(':')));
  if (fields.cluster_state !== 'ok' || Number(fields.cluster_slots_ok) !== CLUSTER_SLOTS) return false;
  const replication = await redisInfo(node, 'replication');
  return replication.role === 'master' || replication.master_link_status === 'up';
}

async function awaitAll(
  nodes: readonly ClusterNode[],
  dir: string,
  what: string,
  ready: (n: ClusterNode) => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const everyone = async (): Promise<boolean> => (await settleAll(nodes.map(ready))).every(Boolean);
  await waitFor(everyone, { timeoutMs, intervalMs: 50, description: what }).catch((err) => {
    const tails = nodes.map((n) => `--- ${n.name} (${n.logFile})\n${n.logTail(8)}`).join('\n');
    throw ClusterNotReady.withCause(err, `${what} within ${timeoutMs} ms`, dir, tails);
  });
}

function slotRange(index: number, masters: number): [number, number] {
  return [Math.floor((index * CLUSTER_SLOTS) / masters), Math.floor(((index + 1) * CLUSTER_SLOTS) / masters) - 1];
}

/** Slots, distinct config epochs, MEET, REPLICATE: the steps redis-cli --cluster create takes, minus its sleeps. */
async function formCluster(group: ServerGroup, masters: ClusterNode[], replicas: ClusterNode[]): Promise<void> {
  const all = [...masters, ...replicas];
  await settleAll(all.map(async (n) => (n.nodeId = String(await call(n, 'CLUSTER', 'MYID')))));
  replicas.forEach((r, i) => (r.replicaOf = masters[i % masters.length].nodeId));
  await settleAll(masters.map((m) => call(m, 'CLUSTER', 'ADDSLOTSRANGE', String(m.slots?.[0]), String(m.slots?.[1]))));
  await settleAll(all.map((n, i) => call(n, 'CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1))));
  await settleAll(all.slice(1).map((n) => call(all[0], 'CLUSTER', 'MEET', n.host, String(n.port))));
  await awaitAll(all, group.dir, 'every node to know every other node', (n) => seesLayout(n, all, false), 30_000);
  await settleAll(replicas.map((r) => call(r, 'CLUSTER', 'REPLICATE', String(r.replicaOf))));
  await awaitAll(all, group.dir, 'every node to see every replica under its master', (n) => seesLayout(n, all, true), 30_000);
  await awaitAll(all, group.dir, 'cluster_state:ok with all slots on every node', clusterOk, 30_000);
}

function checkCount(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw InvalidOption(name, `expected an integer >= ${min}, got ${value}`);
  return value;
}

/** Starts `masters` x (1 + `replicasPerMaster`) cluster-enabled nodes and forms one cluster of them. */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masterCount = checkCount('masters', options.masters ?? 3, 1);
  const replicaCount = masterCount * checkCount('replicasPerMaster', options.replicasPerMaster ?? 0, 0);
  const nodeTimeoutMs = checkCount('nodeTimeoutMs', options.nodeTimeoutMs ?? 2_000, 100);
  const config = { password: checkPassword(options.password), cluster: { nodeTimeoutMs } };
  const create = (launch: ServerLaunch, port: number): ClusterNode => new ClusterNode(launch, port, config.password);
  return startGroup('redis-cluster', async (group) => {
    const nodes = await settleAll(
      Array.from({ length: masterCount + replicaCount }, (_, i) => startRedisNode(group, `node${i + 1}`, config, create, freeClusterPort)),
    );
    const masters = nodes.slice(0, masterCount);
    const replicas = nodes.slice(masterCount);
    masters.forEach((m, i) => (m.slots = slotRange(i, masterCount)));
    await formCluster(group, masters, replicas);
    let destroyed: Promise<void> | undefined;
    return {
      nodes,
      masters,
      replicas,
      dir: group.dir,
      waitForClusterOk: ({ timeoutMs = 30_000 } = {}) =>
        awaitAll(
          nodes.filter((n) => n.running),
          group.dir,
          'cluster_state:ok with all slots on every running node',
          clusterOk,
          timeoutMs,
        ),
      destroy: () => (destroyed ??= group.destroy()),
    };
  });
}
