// A cross-slot (or cross-shard) MGET that the cache answers in part: the cached keys form one part
// already in, only the slot parts with missing keys are fetched (fill-armed when admitted: on each
// master's fill connection, the session holding later commands until the reply left), and the
// fan-out merges every part in key order at the command's sequence.
import { encodeCommand, type CommandBatch } from '@dbproxy/resp';
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

/**
 * Serves the cached `frames` (per key position; undefined: missed) of MGET `i` and fetches the rest
 * per routing group, fill-armed when `fill`. False when there is nothing to serve or fill, or a key
 * maps nowhere or to no backend (dispatch goes on as usual and reports that).
 */
export function partialMget(s: CommandSession, cache: ReplyCache, batch: CommandBatch, i: number, spec: CommandSpec, keys: readonly string[], frames: readonly (Buffer | undefined)[], fill: boolean): boolean {
  const routes = s.edge.routes;
  const src = batch.source(i);
  const cached: number[] = [];
  const groups: number[] = [];
  const members: number[][] = [];
  for (let k = 0; k < keys.length; k++) {
    if (frames[k] !== undefined) {
      cached.push(k);
      continue;
    }
    const group = routes.groupOfKey(src, batch.offset(i, k + 1), batch.length(i, k + 1));
    if (group === UNMAPPED) return false;
    const g = groups.indexOf(group);
    if (g >= 0) members[g].push(k);
    else {
      groups.push(group);
      members.push([k]);
    }
  }
  // Nothing cached and no fill admitted: the dispatcher's split does the same without the cache.
  if (cached.length === 0 && !fill) return false;
  const targets = groups.map((g) => s.routeOfGroup(g));
  if (targets.some((t) => t === undefined)) return false;
  // A part may go on a fill connection: nothing later of the session may run on the server before
  // it, so the session holds until this reply has left (held before anything is sent, so a reply that
  // came at once lifts it).
  if (fill) s.holdUntilDrained();
  const merge = multiKeyMerge(spec);
  // Part 0 is the cached keys (when any); then one part per group with misses.
  const first = cached.length > 0 ? 1 : 0;
  const fanout = new Fanout(s, merge, groups.length + first, first === 1 ? [cached, ...members] : members, keys.length, spec.display, routes.cluster ? groups : []);
  const seq = s.ring.reserve();
  s.ring.time(seq, s.edge.metrics.latency.series(s.listener, commandType(spec), SEVERAL_BACKENDS).statement);
  s.edge.metrics.fanouts.inc({ policy: MERGE_NAMES[merge] });
  if (first === 1) {
    const part = Buffer.concat([Buffer.from(`*${cached.length}\r\n`), ...cached.map((k) => frames[k] as Buffer)]);
    fanout.deliver(seq, 0, part, 0, part.length);
  }
  const flags = routes.cluster ? SendFlag.Redirectable : 0;
  (targets as EndpointRoute[]).forEach((route, g) => {
    const frame = encodeCommand([MGET, ...members[g].map((k) => batch.argToBuffer(i, k + 1))]);
    countCommand(route, spec);
    const fillLink = fill && cache.writesSettled(route) ? cache.fillLink(route) : undefined;
    const tickets = fillLink !== undefined ? members[g].map((k) => cache.store.arm(keys[k])) : [];
    if (fillLink === undefined || tickets.every((t) => t === undefined)) return s.linkFor(route).send(fanout, seq, g + first, flags, 0, frame, 0, frame.length);
    const sink = new FillSink(cache.store, cache.fillLinks, fanout, fillLink, tickets as (FillTicket | undefined)[], true);
    fillLink.send(sink, seq, OPT_IN_PART, 0, 0, CACHING_YES, 0, CACHING_YES.length);
    fillLink.send(sink, seq, g + first, flags, 0, frame, 0, frame.length);
  });
  return true;
}
