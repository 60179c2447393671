// Where each client command goes: the policy of its spec (local, state, transaction, pub/sub,
// blocking, cluster-wide, refused), else its keys' shard or slot, checked on the read-only
// listener before anything is routed.
import type { CommandBatch } from '@dbproxy/resp';
import { cachedCommand } from '../cache/cached-commands';
import { RedisEdgeErrors } from '../errors';
import { blockingCommand } from './blocking';
import { CommandFlag, Handling, RequestPolicy, ResponsePolicy } from './command-flags';
import type { CommandSpec } from './command-table';
import { commandType, countCommand } from './counting';
import { fanOutAll, splitByGroup } from './fanout';
import type { EndpointRoute } from './link-directory';
import { killCommand } from './kill';
import { localCommand } from './local-commands';
import { UNMAPPED } from './route-table';
import { scanCommand } from './scan';
import type { CommandSession } from './session';
import { stateCommand } from './state-commands';
import { pubsubCommand, restrictedWhileSubscribed } from './subscriber';
import { transactionCommand } from './transaction';

/** Redis closes a connection that sends `POST` or `Host:` (securityWarningCommand): never on a shared one. */
function crossProtocol(batch: CommandBatch, i: number): boolean {
  const length = batch.length(i, 0);
  return (length === 4 && batch.argEquals(i, 0, 'POST')) || (length === 5 && batch.argEquals(i, 0, 'HOST:'));
}

export function dispatchCommand(s: CommandSession, batch: CommandBatch, i: number): void {
  if (crossProtocol(batch, i)) return s.refuseCrossProtocol();
  const table = s.edge.table;
  if (!table) return s.replyError(RedisEdgeErrors.loading(), 'loading');
  s.edge.admin.commands++;
  const spec = table.get(batch, i);
  if (spec === undefined) return unknownCommand(s, batch, i);
  s.statement = spec.display;
  if (s.subscriber && restrictedWhileSubscribed(s, spec)) return s.replyError(RedisEdgeErrors.subscribedContext(batch.argToString(i, 0)), 'subscribed_context');
  if (s.tx && spec.handling !== Handling.Transaction) return s.tx.queue(s, batch, i, spec);
  if (spec.subcommands !== undefined && batch.argCount[i] >= 2) return unknownSubcommand(s, batch, i, spec);
  if (s.readOnly && !readOnlyAllows(s, spec)) return;
  const cache = s.edge.cache;
  if (cache !== undefined && cachedCommand(s, cache, batch, i, spec)) return;
  switch (spec.handling) {
    case Handling.Forward:
      return forward(s, batch, i, spec);
    case Handling.Blocking:
      return blockingCommand(s, batch, i, spec);
    case Handling.BlockingIfBlock:
      return hasBlockOption(batch, i) ? blockingCommand(s, batch, i, spec) : forward(s, batch, i, spec);
    case Handling.Local:
      return localCommand(s, batch, i, spec);
    case Handling.State:
      return stateCommand(s, batch, i, spec);
    case Handling.Transaction:
      return transactionCommand(s, batch, i, spec);
    case Handling.PubSub:
      return pubsubCommand(s, batch, i, spec);
    case Handling.Scan:
      return scanCommand(s, batch, i, spec);
    case Handling.Publish:
      return publish(s, batch, i, spec);
    case Handling.Administrative:
      return s.replyError(RedisEdgeErrors.administrative(spec.display), 'administrative');
    case Handling.ClusterCommand:
      return s.replyError(RedisEdgeErrors.clusterDisabled(), 'cluster');
    case Handling.Kill:
      return killCommand(s, batch, i, spec);
    default:
      return s.replyError(RedisEdgeErrors.unsupported(spec.display, spec.reason), 'unsupported');
  }
}

/** Writes, scripts that may write and unknown commands never reach a backend from the read-only listener. */
export function readOnlyAllows(s: CommandSession, spec: CommandSpec): boolean {
  if ((spec.flags & CommandFlag.Write) !== 0) {
    s.replyError(RedisEdgeErrors.readOnly(spec.display), 'read_only');
    return false;
  }
  const writableScript = (spec.flags & CommandFlag.Script) !== 0 && (spec.flags & CommandFlag.ReadOnly) === 0;
  if ((spec.flags & CommandFlag.MayReplicate) !== 0 || writableScript) {
    s.replyError(RedisEdgeErrors.readOnlyScript(spec.display), 'read_only');
    return false;
  }
  return true;
}

/** A command the backend does not know: its own error reply, from the home node (refused on the read-only listener). */
function unknownCommand(s: CommandSession, batch: CommandBatch, i: number): void {
  if (s.readOnly) return s.replyError(RedisEdgeErrors.readOnlyUnknown(batch.argToString(i, 0)), 'unknown_read_only');
  if (s.tx) return s.tx.queueUnknown(s, batch, i);
  const home = s.homeRoute();
  if (!home) return s.replyError(RedisEdgeErrors.noBackend('primary', s.edge.routes.shardName()));
  s.sendTo(home, batch.buffer, batch.frameStart[i], batch.frameEnd[i]);
}

/**
 * A container command (CLIENT, CONFIG, ...) with a subcommand the server does not list (CLIENT SETINFO
 * before Redis 7.2, which ioredis sends on connect): answered as Redis answers it, never queued on a
 * shared connection, where a busy script would hold the client's first replies.
 */
function unknownSubcommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  const sub = batch.argToString(i, 1).slice(0, 128);
  s.replyError(RedisEdgeErrors.unknownSubcommand(sub, spec.name.toUpperCase()), 'unknown_subcommand');
}

function hasBlockOption(batch: CommandBatch, i: number): boolean {
  const argc = batch.argCount[i];
  for (let k = 1; k < argc; k++) {
    if (batch.argEquals(i, k, 'STREAMS')) return false;
    if (batch.argEquals(i, k, 'BLOCK')) return true;
  }
  return false;
}

/** The one group (slot or shard index) all of the command's keys share, UNMAPPED, or MIXED. */
export const MIXED = -2;
export function groupOfKeys(s: CommandSession, batch: CommandBatch, i: number): number {
  const keys = s.keys;
  const routes = s.edge.routes;
  const src = batch.source(i);
  const first = keys.positions[0];
  const group = routes.groupOfKey(src, batch.offset(i, first), batch.length(i, first));
  for (let k = 1; k < keys.count; k++) {
    const at = keys.positions[k];
    if (routes.groupOfKey(src, batch.offset(i, at), batch.length(i, at)) !== group) return MIXED;
  }
  return group;
}

function forward(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  const routes = s.edge.routes;
  if (routes.single) return toRoute(s, batch, i, spec, s.homeRoute());
  spec.keys.find(batch, i, s.keys);
  if (s.keys.count === 0) return keyless(s, batch, i, spec);
  const group = groupOfKeys(s, batch, i);
  if (!s.gates.empty && s.gates.blocks(group)) return s.retryAfterDrain();
  if (group >= 0) return toRoute(s, batch, i, spec, s.routeOfGroup(group), group);
  if (group === UNMAPPED) return s.replyError(RedisEdgeErrors.keyUnmapped(), 'unmapped_key');
  if (!spec.keys.complete && !routes.cluster) return s.replyError(RedisEdgeErrors.keysUnknown(spec.display), 'keys_unknown');
  if (spec.requestPolicy === RequestPolicy.MultiShard) return splitByGroup(s, batch, i, spec);
  s.replyError(RedisEdgeErrors.crossSlot(routes.cluster ? 'slot' : 'shard'), 'cross_slot');
}

function keyless(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  if (!s.gates.empty && s.gates.blocks(-1)) return s.retryAfterDrain();
  const everywhere = spec.requestPolicy === RequestPolicy.AllShards || spec.requestPolicy === RequestPolicy.AllNodes;
  if (everywhere && spec.responsePolicy !== ResponsePolicy.Special && s.edge.routes.shards.length > 1) return fanOutAll(s, batch, i, spec);
  toRoute(s, batch, i, spec, s.homeRoute());
}

/** Sends the command to `route`, the node of routing group `group` (the home node when omitted). */
export function toRoute(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec, route: EndpointRoute | undefined, group = -1): void {
  if (!route) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', group < 0 ? s.edge.routes.shardName() : s.edge.routes.nameOfGroup(group)));
  countCommand(route, spec);
  s.sendTo(route, batch.buffer, batch.frameStart[i], batch.frameEnd[i], s.edge.metrics.latency.series(s.listener, commandType(spec), route.endpoint.name).statement);
}

/** PUBLISH: by channel over standalone shards (where SUBSCRIBE listens); any node of a cluster (it broadcasts). */
function publish(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  const routes = s.edge.routes;
  if (routes.cluster || routes.single || batch.argCount[i] < 2) return toRoute(s, batch, i, spec, s.homeRoute());
  const group = routes.groupOfKey(batch.source(i), batch.offset(i, 1), batch.length(i, 1));
  if (group === UNMAPPED) return s.replyError(RedisEdgeErrors.keyUnmapped(), 'unmapped_key');
  toRoute(s, batch, i, spec, s.routeOfGroup(group), group);
}
