// The reply cache in the dispatcher: GET and MGET (up to 64 keys) answered from the cache at their
// sequence, or sent fill-armed behind CLIENT CACHING YES on the master's fill connection (only by a
// session with nothing else in flight; a cross-slot MGET per slot part); every write invalidates its keys at
// dispatch (a write whose keys are not known flushes), so a session always reads its own writes.
// Strict hits wait for their tracker barrier (hit-barrier.ts); while any waits, the session's later
// commands other than hits wait until its replies are out, and a hit waits for earlier non-hits.
import { Buffer } from 'node:buffer';
import type { CommandBatch } from '@dbproxy/resp';
import type { BackendLink } from '../io/backend-link';
import { SendFlag } from '../io/reply-sink';
import { CommandFlag } from '../command/command-flags';
import type { CommandSpec } from '../command/command-table';
import { commandType, countCommand } from '../command/counting';
import type { EndpointRoute } from '../command/link-directory';
import type { CommandSession } from '../command/session';
import { MAX_CACHED_KEYS } from './admission';
import { CACHING_YES, FillSink, mayFillApart, OPT_IN_PART } from './fill-sink';
import { deferHit } from './hit-barrier';
import { bucketOfBytes } from './key-filter';
import { partialMget } from './partial-mget';
import type { ReplyCache } from './reply-cache';
import type { CacheCounters, FillTicket } from './reply-store';

/** Whether `spec` may change keys: writes, and scripts not flagged read-only. */
export function mayWrite(spec: CommandSpec): boolean {
  const f = spec.flags;
  return (f & CommandFlag.Write) !== 0 || ((f & CommandFlag.Script) !== 0 && (f & CommandFlag.ReadOnly) === 0);
}

/** The keys of a write, as cache keys; null when they are not all known (the cache is then flushed). */
export function writtenKeys(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): string[] | null {
  spec.keys.find(batch, i, s.keys);
  const keys = s.keys;
  if (keys.count === 0 || !spec.keys.complete) return null;
  const src = batch.source(i);
  const out: string[] = [];
  for (let k = 0; k < keys.count; k++) {
    const off = batch.offset(i, keys.positions[k]);
    out.push(src.toString('latin1', off, off + batch.length(i, keys.positions[k])));
  }
  return out;
}

/** Invalidates a write's keys now (null: flushes). */
export function invalidateWrite(cache: ReplyCache, keys: readonly string[] | null): void {
  cache.fenceWrites();
  if (keys === null) return cache.flush('write');
  for (const key of keys) cache.store.invalidate(key);
}

/** True when the command was answered from the cache or sent fill-armed; false: dispatch goes on as usual. */
export function cachedCommand(s: CommandSession, cache: ReplyCache, batch: CommandBatch, i: number, spec: CommandSpec): boolean {
  if (mayWrite(spec)) {
    if (s.hitsWaiting > 0) return waitForReplies(s);
    invalidateWrite(cache, writtenKeys(s, batch, i, spec));
    return false;
  }
  const mget = spec.name === 'mget';
  if (!mget && spec.name !== 'get') return s.hitsWaiting > 0 && waitForReplies(s);
  // Sessions on connections of their own (state, WATCH), the read-only listener (replicas), and a
  // session whose slots are gated (a fan-out or retry in flight) neither read nor fill the cache.
  if (s.own !== undefined || s.readOnly || s.tx !== undefined || !s.gates.empty) return s.hitsWaiting > 0 && waitForReplies(s);
  const argc = batch.argCount[i];
  if (mget ? argc < 2 || argc > MAX_CACHED_KEYS + 1 : argc !== 2) return s.hitsWaiting > 0 && waitForReplies(s);
  return mget ? cachedMget(s, cache, batch, i, spec) : cachedGet(s, cache, batch, i, spec);
}

/**
 * The command runs again once every reply the session owes has left: nothing it sends may overtake
 * a hit still waiting for its barrier (the hit could fall back to the server).
 */
function waitForReplies(s: CommandSession): true {
  s.retryAfterDrain();
  return true;
}

/**
 * A strict hit behind the session's commands in flight on the server (no hit waiting) goes there
 * too, behind them, unfilled: a barrier could answer it from before them.
 */
function behindServerReads(counters: CacheCounters): false {
  counters.misses++;
  return false;
}

function keyAt(batch: CommandBatch, i: number, k: number): string {
  const off = batch.offset(i, k);
  return batch.source(i).toString('latin1', off, off + batch.length(i, k));
}

/** Keys 1..n of command `i` as cache keys. */
function keysOf(batch: CommandBatch, i: number, n: number): string[] {
  const keys: string[] = new Array<string>(n);
  for (let k = 0; k < n; k++) keys[k] = keyAt(batch, i, k + 1);
  return keys;
}

/** The route of the command's keys; undefined when they span groups or map nowhere (dispatch reports that). */
function routeOf(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): EndpointRoute | undefined {
  if (s.edge.routes.single) return s.homeRoute();
  spec.keys.find(batch, i, s.keys);
  const keys = s.keys;
  if (keys.count === 0) return undefined;
  const routes = s.edge.routes;
  const src = batch.source(i);
  const group = routes.groupOfKey(src, batch.offset(i, keys.positions[0]), batch.length(i, keys.positions[0]));
  for (let k = 1; k < keys.count; k++) {
    if (routes.groupOfKey(src, batch.offset(i, keys.positions[k]), batch.length(i, keys.positions[k])) !== group) return undefined;
  }
  return group >= 0 ? s.routeOfGroup(group) : undefined;
}

/** The cached reply of key `k` of command `i`, without making a string of the key when its bucket holds none. */
function lookupAt(cache: ReplyCache, batch: CommandBatch, i: number, k: number, forMget: boolean): Buffer | undefined {
  const off = batch.offset(i, k);
  const src = batch.source(i);
  if (!cache.store.filter.mayHold(bucketOfBytes(src, off, off + batch.length(i, k)))) return undefined;
  return cache.store.lookup(src.toString('latin1', off, off + batch.length(i, k)), forMget);
}

function cachedGet(s: CommandSession, cache: ReplyCache, batch: CommandBatch, i: number, spec: CommandSpec): boolean {
  const counters = cache.store.counters;
  const hit = lookupAt(cache, batch, i, 1, false);
  if (s.hitsWaiting > 0 && (hit === undefined || s.ring.outstanding !== s.hitsWaiting)) return waitForReplies(s);
  cache.admission.record(1, hit !== undefined);
  if (hit !== undefined && cache.strict && s.ring.outstanding !== s.hitsWaiting) return behindServerReads(counters);
  if (hit !== undefined) {
    if (cache.strict) return deferHit(s, cache, batch, i, spec, [keyAt(batch, i, 1)], undefined, false);
    counters.hits++;
    s.reply(hit);
    return true;
  }
  counters.misses++;
  if (cache.fillsPaused || !mayFillApart(s) || !cache.admission.admit(1)) return false;
  const route = routeOf(s, batch, i, spec);
  if (route === undefined) return false;
  const fillLink = cache.writesSettled(route) ? cache.fillLink(route) : undefined;
  if (fillLink === undefined) return false;
  const ticket = cache.store.arm(keyAt(batch, i, 1));
  if (ticket === undefined) return false;
  sendArmed(s, cache, fillLink, [ticket], false, route, batch, i, spec);
  return true;
}

function cachedMget(s: CommandSession, cache: ReplyCache, batch: CommandBatch, i: number, spec: CommandSpec): boolean {
  const n = batch.argCount[i] - 1;
  const frames: (Buffer | undefined)[] = new Array<Buffer | undefined>(n);
  let found = 0;
  for (let k = 0; k < n; k++) {
    frames[k] = lookupAt(cache, batch, i, k + 1, true);
    if (frames[k] !== undefined) found++;
  }
  const hit = found === n;
  // While hits wait, only a full hit with nothing else owed joins them.
  if (s.hitsWaiting > 0 && (!hit || s.ring.outstanding !== s.hitsWaiting)) return waitForReplies(s);
  cache.admission.record(n, hit);
  const counters = cache.store.counters;
  if (found > 0 && cache.strict && s.ring.outstanding !== s.hitsWaiting) return behindServerReads(counters);
  if (hit) {
    if (cache.strict) return deferHit(s, cache, batch, i, spec, keysOf(batch, i, n), frames.map(() => true), false);
    counters.hits++;
    s.reply(Buffer.concat([Buffer.from(`*${n}\r\n`), ...(frames as Buffer[])]));
    return true;
  }
  counters.misses++;
  const fill = !cache.fillsPaused && mayFillApart(s) && cache.admission.admit(n);
  const route = routeOf(s, batch, i, spec);
  // Keys over several slots: the cached ones are served (strict: after their barriers), the slot parts
  // with misses fetched.
  if (route === undefined) {
    if (s.edge.routes.single || (!fill && found === 0)) return false;
    if (cache.strict && found > 0) return deferHit(s, cache, batch, i, spec, keysOf(batch, i, n), frames.map((f) => f !== undefined), fill);
    return partialMget(s, cache, spec, keysOf(batch, i, n), frames, fill);
  }
  if (!fill) return false;
  const fillLink = cache.writesSettled(route) ? cache.fillLink(route) : undefined;
  if (fillLink === undefined) return false;
  const tickets: (FillTicket | undefined)[] = keysOf(batch, i, n).map((key) => cache.store.arm(key));
  if (tickets.every((t) => t === undefined)) return false;
  sendArmed(s, cache, fillLink, tickets, true, route, batch, i, spec);
  return true;
}

/**
 * CLIENT CACHING YES, then the command, on the master's fill connection (what toRoute does, with the
 * opt-in); the session dispatches nothing more until its reply has left, so no later command of it
 * can run before the fill on the server.
 */
function sendArmed(s: CommandSession, cache: ReplyCache, fillLink: BackendLink, tickets: readonly (FillTicket | undefined)[], mget: boolean, route: EndpointRoute, batch: CommandBatch, i: number, spec: CommandSpec): void {
  countCommand(route, spec);
  if (s.spans !== undefined) s.spans.sending(route.endpoint, s.state.db);
  // Held before sending: a reply (or failure) that came at once would lift the hold.
  s.holdUntilDrained();
  const seq = s.ring.reserve();
  s.ring.time(seq, s.edge.metrics.latency.series(s.listener, commandType(spec), route.endpoint.name).statement);
  const sink = new FillSink(cache.store, cache.fillLinks, s, fillLink, tickets, mget);
  fillLink.send(sink, seq, OPT_IN_PART, 0, 0, CACHING_YES, 0, CACHING_YES.length);
  fillLink.send(sink, seq, -1, s.edge.routes.cluster ? SendFlag.Redirectable : 0, 0, batch.buffer, batch.frameStart[i], batch.frameEnd[i]);
}

