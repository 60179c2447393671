// The reply cache in the dispatcher: GET and MGET (up to 64 keys) answered from the cache at their
// sequence, or sent fill-armed behind CLIENT CACHING YES (a cross-slot MGET per slot part); every write invalidates its keys at
// dispatch (a write whose keys are not known flushes), so a session always reads its own writes.
// Strict hits wait for their tracker barrier (hit-barrier.ts); while any waits, the session's later
// commands other than hits wait until its replies are out, and a hit waits for earlier non-hits.
import type { CommandBatch } from '@dbproxy/resp';
import { SendFlag } from '../io/reply-sink';
import { CommandFlag } from '../command/command-flags';
import type { CommandSpec } from '../command/command-table';
import { commandType, countCommand } from '../command/counting';
import type { EndpointRoute } from '../command/link-directory';
import type { CommandSession } from '../command/session';
import { MAX_CACHED_KEYS } from './admission';
import { FillSink, OPT_IN_PART } from './fill-sink';
import { deferHit } from './hit-barrier';
import { partialMget } from './partial-mget';
import { CACHING_YES, type ReplyCache } from './reply-cache';
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

function cachedGet(s: CommandSession, cache: ReplyCache, batch: CommandBatch, i: number, spec: CommandSpec): boolean {
  const key = keyAt(batch, i, 1);
  const counters = cache.store.counters;
  const hit = cache.store.lookup(key, false);
  if (s.hitsWaiting > 0 && (hit === undefined || s.ring.outstanding !== s.hitsWaiting)) return waitForReplies(s);
  cache.admission.record(1, hit !== undefined);
  if (hit !== undefined && cache.strict && s.ring.outstanding !== s.hitsWaiting) return behindServerReads(counters);
  if (hit !== undefined) {
    if (cache.strict) return deferHit(s, cache, batch, i, spec, [key], undefined, false);
    counters.hits++;
    s.reply(hit);
    return true;
  }
  counters.misses++;
  if (cache.fillsPaused || !cache.admission.admit(1)) return false;
  const route = routeOf(s, batch, i, spec);
  if (route === undefined) return false;
  const link = s.linkFor(route);
  if (!cache.prepareFill(link, route)) return false;
  const ticket = cache.store.arm(key);
  if (ticket === undefined) return false;
  sendArmed(s, new FillSink(cache, s, link, [ticket], false), route, batch, i, spec);
  return true;
}

function cachedMget(s: CommandSession, cache: ReplyCache, batch: CommandBatch, i: number, spec: CommandSpec): boolean {
  const n = batch.argCount[i] - 1;
  const keys: string[] = new Array<string>(n);
  const frames: (Buffer | undefined)[] = new Array<Buffer | undefined>(n);
  let found = 0;
  for (let k = 0; k < n; k++) {
    keys[k] = keyAt(batch, i, k + 1);
    frames[k] = cache.store.lookup(keys[k], true);
    if (frames[k] !== undefined) found++;
  }
  const hit = found === n;
  // While hits wait, only a full hit with nothing else owed joins them.
  if (s.hitsWaiting > 0 && (!hit || s.ring.outstanding !== s.hitsWaiting)) return waitForReplies(s);
  cache.admission.record(n, hit);
  const counters = cache.store.counters;
  if (found > 0 && cache.strict && s.ring.outstanding !== s.hitsWaiting) return behindServerReads(counters);
  if (hit) {
    if (cache.strict) return deferHit(s, cache, batch, i, spec, keys, frames.map(() => true), false);
    counters.hits++;
    s.reply(Buffer.concat([Buffer.from(`*${n}\r\n`), ...(frames as Buffer[])]));
    return true;
  }
  counters.misses++;
  const fill = !cache.fillsPaused && cache.admission.admit(n);
  const route = routeOf(s, batch, i, spec);
  // Keys over several slots: the cached ones are served (strict: after their barriers), the slot parts with misses fetched.
  if (route === undefined) {
    if (s.edge.routes.single) return false;
    if (cache.strict && found > 0) return deferHit(s, cache, batch, i, spec, keys, frames.map((f) => f !== undefined), fill);
    return partialMget(s, cache, spec, keys, frames, fill);
  }
  if (!fill) return false;
  const link = s.linkFor(route);
  if (!cache.prepareFill(link, route)) return false;
  const tickets: (FillTicket | undefined)[] = keys.map((key) => cache.store.arm(key));
  if (tickets.every((t) => t === undefined)) return false;
  sendArmed(s, new FillSink(cache, s, link, tickets, true), route, batch, i, spec);
  return true;
}

/** CLIENT CACHING YES, then the command, on the link the sink was made for (what toRoute does, with the opt-in). */
function sendArmed(s: CommandSession, sink: FillSink, route: EndpointRoute, batch: CommandBatch, i: number, spec: CommandSpec): void {
  countCommand(route, spec);
  if (s.spans !== undefined) s.spans.sending(route.endpoint, s.state.db);
  const seq = s.ring.reserve();
  s.ring.time(seq, s.edge.metrics.latency.series(s.listener, commandType(spec), route.endpoint.name).statement);
  sink.link.send(sink, seq, OPT_IN_PART, 0, 0, CACHING_YES, 0, CACHING_YES.length);
  sink.link.send(sink, seq, -1, s.edge.routes.cluster ? SendFlag.Redirectable : 0, 0, batch.buffer, batch.frameStart[i], batch.frameEnd[i]);
}

