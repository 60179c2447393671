// A cross-slot (or cross-shard) MGET that the cache answers in part: the cached keys form one part
// already in, only the slot parts with missing keys are fetched (fill-armed when admitted: on each
// master's fill connection, the session holding later commands until the reply left), and the
// fan-out merges every part in key order at the command's sequence. A strict hit whose barrier found
// keys gone (hit-barrier.ts) is answered the same way at the sequence it reserved.
import { Buffer } from 'node:buffer';
import { encodeCommand } from '@dbproxy/resp';
import { errorReply, RedisEdgeErrors } from '../errors';
import { SendFlag } from '../io/reply-sink';
import type { CommandSpec } from '../command/command-table';
import { countCommand, commandType, SEVERAL_BACKENDS } from '../command/counting';
import { Fanout } from '../command/fanout';
import type { EndpointRoute } from '../command/link-directory';
import { MERGE_NAMES, multiKeyMerge } from '../command/merge';
import { UNMAPPED } from '../command/route-table';
import type { CommandSession } from '../command/session';
import { CACHING_YES, FillSink, OPT_IN_PART } from './fill-sink';
import type { ReplyCache } from './reply-cache';
import type { FillTicket } from './reply-store';

const MGET = Buffer.from('MGET');

/** The cached key positions, and the missing ones per routing group with each group's route. */
interface Parts {
  readonly cached: number[];
  readonly groups: number[];
  readonly members: number[][];
  readonly targets: EndpointRoute[];
  readonly bytes: Buffer[];
}

/** The parts of an MGET of `keys` (cache keys, latin1) with `frames` cached, or the error a key's routing gives. */
function partsOf(s: CommandSession, keys: readonly string[], frames: readonly (Buffer | undefined)[]): Parts | Error {
  const routes = s.edge.routes;
  const cached: number[] = [];
  const groups: number[] = [];
  const members: number[][] = [];
  const bytes: Buffer[] = [];
  for (let k = 0; k < keys.length; k++) {
    const key = Buffer.from(keys[k], 'latin1');
    bytes.push(key);
    if (frames[k] !== undefined) {
      cached.push(k);
      continue;
    }
    const group = routes.single ? 0 : routes.groupOfKey(key, 0, key.length);
    if (group === UNMAPPED) return RedisEdgeErrors.keyUnmapped();
    const g = groups.indexOf(group);
    if (g >= 0) members[g].push(k);
    else {
      groups.push(group);
      members.push([k]);
    }
  }
  const targets: EndpointRoute[] = [];
  for (const group of groups) {
    const route = routes.single ? s.homeRoute() : s.routeOfGroup(group);
    if (route === undefined) return RedisEdgeErrors.noBackend('primary', routes.single ? routes.shardName() : routes.nameOfGroup(group));
    targets.push(route);
  }
  return { cached, groups, members, targets, bytes };
}

/**
 * Serves the cached `frames` (per key position; undefined: missed) of an MGET of `keys` and fetches the rest
 * per routing group, fill-armed when `fill`. False when there is nothing to serve or fill, or a key
 * maps nowhere or to no backend (dispatch goes on as usual and reports that).
 */
export function partialMget(s: CommandSession, cache: ReplyCache, spec: CommandSpec, keys: readonly string[], frames: readonly (Buffer | undefined)[], fill: boolean): boolean {
  const parts = partsOf(s, keys, frames);
  // Nothing cached and no fill admitted: the dispatcher's split does the same without the cache.
  if (parts instanceof Error || (parts.cached.length === 0 && !fill)) return false;
  // A part may go on a fill connection: nothing later of the session may run on the server before
  // it, so the session holds until this reply has left (held before anything is sent, so a reply that
  // came at once lifts it).
  if (fill) s.holdUntilDrained();
  const seq = s.ring.reserve();
  s.ring.time(seq, s.edge.metrics.latency.series(s.listener, commandType(spec), SEVERAL_BACKENDS).statement);
  sendParts(s, cache, spec, keys, frames, fill, seq, parts);
  return true;
}

/**
 * The same at a sequence reserved already (a strict hit after its barrier; `fill` only when that read
 * is all the session has in flight). Errors are answered at the sequence.
 */
export function mgetAt(s: CommandSession, cache: ReplyCache, spec: CommandSpec, keys: readonly string[], frames: readonly (Buffer | undefined)[], fill: boolean, seq: number): void {
  const parts = partsOf(s, keys, frames);
  if (parts instanceof Error) return s.complete(seq, errorReply(parts));
  if (fill) s.holdUntilDrained();
  sendParts(s, cache, spec, keys, frames, fill, seq, parts);
}

function sendParts(s: CommandSession, cache: ReplyCache, spec: CommandSpec, keys: readonly string[], frames: readonly (Buffer | undefined)[], fill: boolean, seq: number, parts: Parts): void {
  const { cached, groups, members, targets, bytes } = parts;
  const cluster = s.edge.routes.cluster;
  const merge = multiKeyMerge(spec);
  // Part 0 is the cached keys (when any); then one part per group with misses.
  const first = cached.length > 0 ? 1 : 0;
  const fanout = new Fanout(s, merge, groups.length + first, first === 1 ? [cached, ...members] : members, keys.length, spec.display, cluster ? groups : []);
  s.edge.metrics.fanouts.inc({ policy: MERGE_NAMES[merge] });
  if (first === 1) {
    const part = Buffer.concat([Buffer.from(`*${cached.length}\r\n`), ...cached.map((k) => frames[k] as Buffer)]);
    fanout.deliver(seq, 0, part, 0, part.length);
  }
  const flags = cluster ? SendFlag.Redirectable : 0;
  targets.forEach((route, g) => {
    const frame = encodeCommand([MGET, ...members[g].map((k) => bytes[k])]);
    countCommand(route, spec);
    const fillLink = fill && cache.writesSettled(route) ? cache.fillLink(route) : undefined;
    const tickets = fillLink !== undefined ? members[g].map((k) => cache.store.arm(keys[k])) : [];
    if (fillLink === undefined || tickets.every((t) => t === undefined)) return s.linkFor(route).send(fanout, seq, g + first, flags, 0, frame, 0, frame.length);
    const sink = new FillSink(cache.store, cache.fillLinks, fanout, fillLink, tickets as (FillTicket | undefined)[], true);
    fillLink.send(sink, seq, OPT_IN_PART, 0, 0, CACHING_YES, 0, CACHING_YES.length);
    fillLink.send(sink, seq, g + first, flags, 0, frame, 0, frame.length);
  });
}
