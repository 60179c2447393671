// Strict cache hits ([redis.cache] consistency = "strict"): a hit reserves its sequence at dispatch
// and waits for a barrier on the tracking connection of every master its cached keys live on (one
// PING per master per turn, trackers.ts). Redis writes a write's invalidation to that connection
// while the write runs, before the writer gets its reply; a PING written after the hit was read is
// answered after it. So once every PONG is in, what the cache still holds is at least as new as any
// write acknowledged before the read was sent: the keys are looked up again and served, and a key
// gone meanwhile (or a tracker lost) sends the read to the server at the reserved sequence.
import { Buffer } from 'node:buffer';
import { encodeCommand, type CommandBatch } from '@dbproxy/resp';
import { errorReply, RedisEdgeErrors } from '../errors';
import { SendFlag } from '../io/reply-sink';
import type { CommandSpec } from '../command/command-table';
import { countCommand } from '../command/counting';
import type { EndpointRoute } from '../command/link-directory';
import { UNMAPPED } from '../command/route-table';
import type { CommandSession } from '../command/session';
import { mgetAt } from './partial-mget';
import type { ReplyCache } from './reply-cache';
import type { BarrierWaiter } from './trackers';

const GET = Buffer.from('GET');

class DeferredHit implements BarrierWaiter {
  /** Barriers still to pass. */
  left = 0;
  private lost = false;

  constructor(
    private readonly s: CommandSession,
    private readonly cache: ReplyCache,
    private readonly spec: CommandSpec,
    private readonly seq: number,
    /** Cache keys (latin1) of the command, in argument order. */
    private readonly keys: readonly string[],
    /** MGET: the keys cached at dispatch (the ones behind a barrier); the others are read from the server. */
    private readonly cached: readonly boolean[] | undefined,
    /** A partial MGET's missing keys are fetched fill-armed (admitted at dispatch). */
    private readonly fill: boolean,
  ) {}

  passed(): void {
    if (--this.left === 0) this.resolve();
  }

  failed(): void {
    this.lost = true;
    if (--this.left === 0) this.resolve();
  }

  private resolve(): void {
    const s = this.s;
    s.hitsWaiting--;
    if (!s.closed) this.answer();
    if (s.hitsWaiting === 0) s.hitsRefetching = false;
  }

  private answer(): void {
    const s = this.s;
    const store = this.cache.store;
    // After a read of this session went to the server, later hits follow it there (their order holds).
    const usable = !this.lost && !s.hitsRefetching;
    if (this.cached === undefined) {
      const frame = usable ? store.lookup(this.keys[0], false) : undefined;
      if (frame !== undefined) {
        store.counters.hits++;
        return s.complete(this.seq, frame);
      }
      store.counters.refetches++;
      s.hitsRefetching = true;
      return refetchGet(s, this.spec, this.keys[0], this.seq);
    }
    const n = this.keys.length;
    const frames = new Array<Buffer | undefined>(n);
    let found = 0;
    for (let k = 0; k < n; k++) {
      frames[k] = usable && this.cached[k] ? store.lookup(this.keys[k], true) : undefined;
      if (frames[k] !== undefined) found++;
    }
    if (found === n) {
      store.counters.hits++;
      return s.complete(this.seq, Buffer.concat([Buffer.from(`*${n}\r\n`), ...(frames as Buffer[])]));
    }
    if (this.cached.some((c, k) => c && frames[k] === undefined)) store.counters.refetches++;
    s.hitsRefetching = true;
    // Fill-armed only when this read is all the session has in flight (fills go on a connection of
    // their own and must not overtake anything of the session).
    mgetAt(s, this.cache, this.spec, this.keys, frames, this.fill && !this.lost && s.ring.outstanding === 1, this.seq);
  }
}

/** The GET of a hit whose key went while it waited, at its sequence. */
function refetchGet(s: CommandSession, spec: CommandSpec, key: string, seq: number): void {
  const bytes = Buffer.from(key, 'latin1');
  const routes = s.edge.routes;
  const group = routes.single ? 0 : routes.groupOfKey(bytes, 0, bytes.length);
  if (group === UNMAPPED) return s.complete(seq, errorReply(RedisEdgeErrors.keyUnmapped()));
  const route = routes.single ? s.homeRoute() : s.routeOfGroup(group);
  if (route === undefined) return s.complete(seq, errorReply(RedisEdgeErrors.noBackend('primary', routes.single ? routes.shardName() : routes.nameOfGroup(group))));
  countCommand(route, spec);
  const frame = encodeCommand([GET, bytes]);
  s.linkFor(route).send(s, seq, -1, routes.cluster ? SendFlag.Redirectable : 0, 0, frame, 0, frame.length);
}

/** The master whose tracker covers key `k` (argument `k + 1`) of command `i`; undefined when it maps nowhere. */
function masterOf(s: CommandSession, batch: CommandBatch, i: number, k: number): EndpointRoute | undefined {
  const routes = s.edge.routes;
  if (routes.single) return undefined;
  const group = routes.groupOfKey(batch.source(i), batch.offset(i, k + 1), batch.length(i, k + 1));
  return group === UNMAPPED ? undefined : s.routeOfGroup(group);
}

/**
 * Defers the hit of command `i` (GET: `cached` undefined; MGET: which keys were cached) behind the
 * barriers of their masters, its reply reserved at the command's sequence. False when a key maps to
 * no master (dispatch goes on and reports that).
 */
export function deferHit(s: CommandSession, cache: ReplyCache, batch: CommandBatch, i: number, spec: CommandSpec, keys: readonly string[], cached: readonly boolean[] | undefined, fill: boolean): boolean {
  // One shard (the usual case): one master, nothing to collect.
  const home = s.edge.routes.single ? s.homeRoute() : undefined;
  const masters: EndpointRoute[] = home !== undefined ? [home] : [];
  for (let k = 0; home === undefined && k < keys.length; k++) {
    if (cached !== undefined && !cached[k]) continue;
    const master = masterOf(s, batch, i, k);
    if (master === undefined) return false;
    if (!masters.some((m) => m.endpoint.key === master.endpoint.key)) masters.push(master);
  }
  const hit = new DeferredHit(s, cache, spec, s.ring.reserve(), keys, cached, fill);
  hit.left = masters.length;
  s.hitsWaiting++;
  // A master not tracked now (its tracker lost: the cache was flushed) fails its barrier at once.
  for (const master of masters) if (!cache.barrier(master.endpoint.key, hit)) hit.failed();
  return true;
}
