// Blocking commands (BLPOP, BRPOP, BLMOVE, BZPOPMIN, XREAD BLOCK, WAIT, ...) on leased dedicated
// connections: the lease returns to the node's idle set when the reply arrives, and the
// connection is closed when the client abandons the command (so the server cancels the block).
import { Buffer } from 'node:buffer';
import { SpanKind, type Span } from '@opentelemetry/api';
import { encodeCommand, type CommandBatch, type Redirect } from '@dbproxy/resp';
import { RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import { isDefaultState } from '../io/endpoint';
import { SendFlag, type ReplySink, type SentFrame } from '../io/reply-sink';
import { ResponsePolicy } from './command-flags';
import type { CommandSpec } from './command-table';
import { BLOCKING_ROUTE, countCommand, SEVERAL_BACKENDS } from './counting';
import { groupOfKeys, MIXED } from './dispatcher';
import { Fanout } from './fanout';
import type { EndpointRoute } from './link-directory';
import { Merge } from './merge';
import { followRedirect, type RedirectHost } from './redirects';
import { UNMAPPED } from './route-table';
import type { CommandSession } from './session';

const ASKING = Buffer.from('*1\r\n$6\r\nASKING\r\n');
/**
 * Before WAIT on a fresh leased connection: Redis measures WAIT against the connection's own write
 * offset, so the lease first runs a command that is replicated (PUBLISH is, on a server outside a
 * cluster), which brings that offset up to everything the server had applied.
 */
const WAIT_PRELUDE = encodeCommand(['PUBLISH', '__dbproxy__:wait', '']);

/** One leased connection running one blocking command for `inner` (the session, or a fan-out part). */
export class LeaseSink implements ReplySink {
  private readonly span: Span;

  constructor(
    private readonly s: CommandSession,
    private readonly link: BackendLink,
    private readonly inner: ReplySink,
  ) {
    s.leases.add(this);
    // a child of the command's span (command-spans.ts): the leased connection's round trip
    this.span = s.edge.tracer.startSpan('redis blocking lease', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'redis', 'server.address': link.endpoint.address, 'dbproxy.backend': link.endpoint.name } }, s.spans?.context());
  }

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    this.end(true);
    this.inner.deliver(seq, part, buf, start, end);
  }

  fail(seq: number, part: number, err: Error): void {
    this.end(false);
    this.inner.fail(seq, part, err);
  }

  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    this.end(true);
    const s = this.s;
    const host: RedirectHost = {
      get closed() {
        return s.closed;
      },
      edge: s.edge,
      resend: (owner, q, p, route, asking, f, fl, attempt) => leaseAndSend(s, route, owner, q, p, f.buf, f.start, f.end, fl, attempt, asking),
    };
    return followRedirect(host, this.inner, seq, part, redirect, frame, flags, via);
  }

  /** The client went away while the command blocked: close the connection so the server stops waiting. */
  abandon(): void {
    if (!this.s.leases.delete(this)) return;
    this.span.addEvent('abandoned by the client');
    this.span.end();
    this.s.edge.metrics.leaseEvents.inc({ event: 'abandoned' });
    this.link.close(RedisEdgeErrors.backendLost(this.link.endpoint.address, 'client abandoned a blocking command'), 'abandoned');
  }

  private end(reusable: boolean): void {
    if (!this.s.leases.delete(this)) return;
    this.span.end();
    this.s.edge.links.release(this.link, reusable && isDefaultState(this.s.state));
  }
}

function leaseAndSend(s: CommandSession, route: EndpointRoute, inner: ReplySink, seq: number, part: number, buf: Buffer, start: number, end: number, flags: number, attempt: number, asking: boolean, prelude?: Buffer): void {
  const link = s.edge.links.lease(route.endpoint, s.state);
  if (link instanceof Error) {
    s.edge.metrics.rejected.inc({ reason: 'leases_exhausted', listener: s.listener });
    return inner.fail(seq, part, link);
  }
  const sink = new LeaseSink(s, link, inner);
  if (prelude) link.send(sink, 0, -1, SendFlag.Skip, 0, prelude, 0, prelude.length);
  if (asking) link.send(sink, 0, -1, SendFlag.Skip, 0, ASKING, 0, ASKING.length);
  link.send(sink, seq, part, asking ? flags | SendFlag.Asked : flags & ~SendFlag.Asked, attempt, buf, start, end);
}

export function blockingCommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  const routes = s.edge.routes;
  const flags = routes.cluster ? SendFlag.Redirectable : 0;
  const start = batch.frameStart[i];
  const end = batch.frameEnd[i];
  let route: EndpointRoute | undefined;
  let group = routes.home;
  spec.keys.find(batch, i, s.keys);
  if (s.keys.count === 0) return blockEverywhere(s, batch, i, spec);
  if (routes.single) route = s.homeRoute();
  else {
    group = groupOfKeys(s, batch, i);
    if (group === MIXED) return s.replyError(RedisEdgeErrors.crossSlot(routes.cluster ? 'slot' : 'shard'), 'cross_slot');
    if (group === UNMAPPED) return s.replyError(RedisEdgeErrors.keyUnmapped(), 'unmapped_key');
    route = s.routeOfGroup(group);
  }
  if (!route) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', routes.single ? routes.shardName() : routes.nameOfGroup(group)));
  countCommand(route, spec);
  const seq = s.ring.reserve();
  s.ring.time(seq, s.edge.metrics.latency.series(s.listener, BLOCKING_ROUTE, route.endpoint.name).statement);
  leaseAndSend(s, route, s, seq, -1, batch.buffer, start, end, flags, 0, false);
}

/**
 * A keyless blocking command (WAIT, WAITAOF): once the session's earlier commands are answered, on
 * every shard's node; the smallest answer wins (response_policy agg_min).
 */
function blockEverywhere(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  if (s.ring.outstanding > 0) return s.retryAfterDrain();
  const byShard = s.allShards();
  const targets = [...new Set(byShard)];
  const prelude = spec.name === 'wait' || spec.name === 'waitaof' ? WAIT_PRELUDE : undefined;
  if (targets.some((t) => t === undefined)) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', s.edge.routes.missingShard(byShard)));
  const merge = spec.responsePolicy === ResponsePolicy.AggMax ? Merge.Max : spec.responsePolicy === ResponsePolicy.AggSum ? Merge.Sum : Merge.Min;
  const seq = s.ring.reserve();
  s.ring.time(seq, s.edge.metrics.latency.series(s.listener, BLOCKING_ROUTE, targets.length === 1 ? (targets[0] as EndpointRoute).endpoint.name : SEVERAL_BACKENDS).statement);
  const sink: ReplySink = targets.length === 1 ? s : new Fanout(s, merge, targets.length);
  targets.forEach((route, p) => {
    countCommand(route as EndpointRoute, spec);
    leaseAndSend(s, route as EndpointRoute, sink, seq, targets.length === 1 ? -1 : p, batch.buffer, batch.frameStart[i], batch.frameEnd[i], 0, 0, false, prelude);
  });
}
