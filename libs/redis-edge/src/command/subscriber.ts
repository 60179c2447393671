// Pub/sub for a command-mode session: dedicated connections per node (channels by shard over
// standalone shards, any node of a cluster; patterns on every shard; shard channels by slot).
// Confirmations come from a mirror of the subscription set, at the command's sequence, after
// every backend confirmed; a message never overtakes the confirmation it followed.
import { Buffer } from 'node:buffer';
import { encodeCommand, type CommandBatch } from '@dbproxy/resp';
import { errorMessage } from '@dbproxy/util';
import { errorReply, RedisEdgeErrors } from '../errors';
import type { BackendLink, FrameSink } from '../io/backend-link';
import { ReplyFlag } from '@dbproxy/resp';
import type { CommandSpec } from './command-table';
import type { EndpointRoute } from './link-directory';
import { confirmation, FrameKind, frameKind } from './pubsub-frames';
import { UNMAPPED } from './route-table';
import type { CommandSession } from './session';

type Family = 'channel' | 'pattern' | 'shard';

/** One (un)subscribe command waiting for its backends' confirmations. */
class PendingOp {
  partsLeft = 0;
  readonly early: Buffer[] = [];
  error: Buffer | undefined;
  constructor(
    readonly seq: number,
    readonly frames: Buffer,
  ) {}
}

const FAMILY: Readonly<Record<string, { family: Family; subscribe: boolean; word: string }>> = {
  subscribe: { family: 'channel', subscribe: true, word: 'subscribe' },
  unsubscribe: { family: 'channel', subscribe: false, word: 'unsubscribe' },
  psubscribe: { family: 'pattern', subscribe: true, word: 'psubscribe' },
  punsubscribe: { family: 'pattern', subscribe: false, word: 'punsubscribe' },
  ssubscribe: { family: 'shard', subscribe: true, word: 'ssubscribe' },
  sunsubscribe: { family: 'shard', subscribe: false, word: 'sunsubscribe' },
};

const ALLOWED_WHILE_SUBSCRIBED = new Set(['subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe', 'ping', 'quit', 'reset']);

/** RESP2 subscribed mode accepts only (un)subscribe, PING, QUIT and RESET (RESP3 accepts anything). */
export function restrictedWhileSubscribed(s: CommandSession, spec: CommandSpec): boolean {
  return s.state.protocol === 2 && (s.subscriber?.subscribed ?? false) && !ALLOWED_WHILE_SUBSCRIBED.has(spec.name);
}

export class Subscriber implements FrameSink {
  private readonly mirror: Record<Family, Map<string, EndpointRoute[]>> = { channel: new Map(), pattern: new Map(), shard: new Map() };
  private readonly links = new Map<string, BackendLink>();
  private readonly waiting = new Map<BackendLink, { op: PendingOp; expected: number }[]>();
  private closed = false;

  constructor(private readonly s: CommandSession) {}

  /** Channels and patterns (Redis's count in (un)subscribe confirmations). */
  get count(): number {
    return this.mirror.channel.size + this.mirror.pattern.size;
  }

  /** Subscribed to anything (as of the commands dispatched so far): RESP2 subscribed mode. */
  get subscribed(): boolean {
    return this.count + this.mirror.shard.size > 0;
  }

  run(name: string, channels: Buffer[]): void {
    const f = FAMILY[name];
    const routesOf = (channel: Buffer): EndpointRoute[] | Error => this.routesOf(f.family, channel);
    const map = this.mirror[f.family];
    if (f.subscribe && this.count + this.mirror.shard.size + channels.length > this.s.edge.settings.maxSubscriptions) {
      return this.s.replyError(RedisEdgeErrors.tooManySubscriptions(this.s.edge.settings.maxSubscriptions), 'subscriptions_limit');
    }
    const names = channels.length > 0 || f.subscribe ? channels : [...map.keys()].map((k) => Buffer.from(k, 'latin1'));
    const perRoute = new Map<EndpointRoute, Buffer[]>();
    const frames: Buffer[] = [];
    for (const channel of names) {
      const key = channel.toString('latin1');
      const routes = f.subscribe ? routesOf(channel) : (map.get(key) ?? []);
      if (routes instanceof Error) return this.s.replyError(routes, 'unmapped_key');
      if (f.subscribe) map.set(key, routes);
      else map.delete(key);
      for (const route of routes) perRoute.set(route, [...(perRoute.get(route) ?? []), channel]);
      frames.push(confirmation(this.s.state.protocol, f.word, channel, f.family === 'shard' ? this.mirror.shard.size : this.count));
    }
    if (names.length === 0) frames.push(confirmation(this.s.state.protocol, f.word, null, f.family === 'shard' ? this.mirror.shard.size : this.count));
    const op = new PendingOp(this.s.ring.reserve(), Buffer.concat(frames));
    if (!this.subscribed && this.s.machine.is('subscribed')) this.s.machine.transition('subscribed', 'ready', 'unsubscribed from everything');
    for (const [route, list] of perRoute) {
      const link = this.linkTo(route);
      link.write(encodeCommand([f.word.toUpperCase(), ...list]));
      const queue = this.waiting.get(link) ?? [];
      queue.push({ op, expected: list.length });
      this.waiting.set(link, queue);
      op.partsLeft++;
    }
    if (op.partsLeft === 0) this.finish(op);
  }

  onFrame(link: BackendLink, buf: Buffer, start: number, end: number, flags: number): void {
    const queue = this.waiting.get(link);
    const head = queue?.[0];
    const kind = frameKind(buf, start, end);
    if (kind === FrameKind.Message || (kind !== FrameKind.Confirmation && (flags & ReplyFlag.Error) === 0)) {
      // Sent before the server handled our pending command: it goes out before that command's confirmations.
      this.s.pushesInFlight++;
      if (head) head.op.early.push(buf.subarray(start, end));
      else if (this.s.ring.push(buf, start, end)) this.s.edge.replies.schedule(this.s);
      return;
    }
    if (!head || !queue) return this.serverUnsubscribed(buf, start, end);
    if (kind === FrameKind.Confirmation && --head.expected > 0) return;
    if (kind !== FrameKind.Confirmation) head.op.error ??= buf.subarray(start, end);
    queue.shift();
    if (queue.length === 0) this.waiting.delete(link);
    if (--head.op.partsLeft === 0) this.finish(head.op);
  }

  onLinkClosed(link: BackendLink, err: Error): void {
    this.links.forEach((l, key) => l === link && this.links.delete(key));
    if (this.closed) return;
    // Subscriptions on that connection are gone and messages may have been missed: the client is told so, then must reconnect and resubscribe.
    const detail = errorMessage(err);
    this.s.close(`pub/sub connection to ${link.endpoint.address} lost: ${detail}`, errorReply(RedisEdgeErrors.subscriptionsLost(link.endpoint.name, link.endpoint.shard || link.endpoint.address)));
  }

  setReading(on: boolean): void {
    for (const link of this.links.values()) link.setReading(on);
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const link of this.links.values()) link.close(RedisEdgeErrors.backendLost(link.endpoint.address, reason), reason);
    this.links.clear();
    this.waiting.clear();
  }

  private finish(op: PendingOp): void {
    this.s.complete(op.seq, Buffer.concat([...op.early, op.error ?? op.frames]));
    if (!this.subscribed && this.waiting.size === 0 && this.s.subscriber === this) {
      this.close('no subscriptions left');
      this.s.subscriber = undefined;
    }
  }

  /** A confirmation nobody asked for: the server dropped shard channels (slot moved); mirror and client follow. */
  private serverUnsubscribed(buf: Buffer, start: number, end: number): void {
    if (this.s.ring.push(buf, start, end)) this.s.edge.replies.schedule(this.s);
  }

  private linkTo(route: EndpointRoute): BackendLink {
    let link = this.links.get(route.endpoint.key);
    if (!link || link.closed) {
      link = this.s.edge.links.open(route.endpoint, this.s.state, this);
      this.links.set(route.endpoint.key, link);
    }
    return link;
  }

  private routesOf(family: Family, channel: Buffer): EndpointRoute[] | Error {
    const routes = this.s.edge.routes;
    if (family === 'pattern') {
      const all = routes.cluster ? [this.s.homeRoute()] : this.s.allShards();
      return all.some((r) => r === undefined) ? RedisEdgeErrors.noBackend('primary', routes.cluster ? routes.shardName() : routes.missingShard(all)) : [...new Set(all as EndpointRoute[])];
    }
    if (routes.cluster && family === 'channel') {
      const home = this.s.homeRoute();
      return home ? [home] : RedisEdgeErrors.noBackend('primary', routes.shardName());
    }
    const group = routes.groupOfKey(channel, 0, channel.length);
    if (group === UNMAPPED) return RedisEdgeErrors.keyUnmapped();
    const route = this.s.routeOfGroup(group);
    return route ? [route] : RedisEdgeErrors.noBackend('primary', routes.nameOfGroup(group));
  }
}

export function pubsubCommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  const subscribe = FAMILY[spec.name]?.subscribe ?? false;
  if (subscribe && batch.argCount[i] < 2) return s.replyError(RedisEdgeErrors.wrongArguments(spec.name));
  const channels = batch.args(i).slice(1).map((c) => Buffer.from(c));
  if (spec.name === 'ssubscribe' && s.edge.routes.cluster && new Set(channels.map((c) => s.edge.routes.groupOfKey(c, 0, c.length))).size > 1) {
    return s.replyError(RedisEdgeErrors.crossSlot('slot'), 'cross_slot');
  }
  s.subscriber ??= new Subscriber(s);
  s.subscriber.run(spec.name, channels);
  if (s.subscriber?.subscribed && s.state.protocol === 2 && s.machine.is('ready')) s.machine.transition('ready', 'subscribed', spec.display);
}
