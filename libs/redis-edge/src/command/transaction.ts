// MULTI/EXEC and WATCH when every key is in one slot or shard: commands are checked and queued
// by the proxy (+QUEUED), then MULTI ... EXEC goes to that node in one write (retried whole on
// MOVED/ASK/TRYAGAIN unless a WATCH pins it). WATCH runs on the session's own connection.
import { Buffer } from 'node:buffer';
import { SpanKind, type Span } from '@opentelemetry/api';
import { encodeCommand, type CommandBatch, type Redirect } from '@dbproxy/resp';
import { invalidateWrite, mayWrite, writtenKeys } from '../cache/cached-commands';
import { errorReply, logIfInternal, RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import { SendFlag, type ReplySink, type SentFrame } from '../io/reply-sink';
import { Handling } from './command-flags';
import type { CommandSpec } from './command-table';
import { groupOfKeys, MIXED, readOnlyAllows } from './dispatcher';
import type { EndpointRoute } from './link-directory';
import { addressOf, followRedirect, MAX_REDIRECTS } from './redirects';
import { UNMAPPED } from './route-table';
import type { CommandSession } from './session';

export interface WatchPin {
  readonly group: number;
  readonly route: EndpointRoute;
  readonly link: BackendLink;
}

const OK = Buffer.from('+OK\r\n');
const QUEUED = Buffer.from('+QUEUED\r\n');
const MULTI = encodeCommand(['MULTI']);
const EXEC = encodeCommand(['EXEC']);
const ASKING = encodeCommand(['ASKING']);
const UNWATCH = encodeCommand(['UNWATCH']);
/** Handlings that cannot run inside a transaction through the proxy. */
const NOT_IN_MULTI = new Set<number>([Handling.State, Handling.PubSub, Handling.Rejected, Handling.Administrative, Handling.ClusterCommand]);

export class TransactionQueue {
  readonly frames: Buffer[] = [];
  /** Keys the queued writes change, invalidated in the reply cache when EXEC is sent (null: unknown, flush). */
  written: string[] | null = [];
  private bytes = 0;
  dirty = false;

  /** `group`: the slot or shard the transaction runs on (-1 until a key decides it). */
  constructor(public group: number) {}

  queue(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
    const argc = batch.argCount[i];
    if (spec.arity > 0 ? argc !== spec.arity : argc < -spec.arity) {
      this.reject(s, RedisEdgeErrors.wrongArguments(spec.name));
      return;
    }
    if (NOT_IN_MULTI.has(spec.handling) && spec.name !== 'unwatch') {
      this.reject(s, RedisEdgeErrors.commandInMulti(spec.display));
      return;
    }
    if (s.readOnly && !readOnlyAllows(s, spec)) {
      this.dirty = true;
      return;
    }
    if (!s.edge.routes.single) {
      spec.keys.find(batch, i, s.keys);
      if (s.keys.count > 0 && !this.keysFit(s, groupOfKeys(s, batch, i))) return;
    }
    const frame = batch.buffer.subarray(batch.frameStart[i], batch.frameEnd[i]);
    this.bytes += frame.length;
    if (this.bytes > s.edge.settings.queryBufferLimit) {
      this.reject(s, RedisEdgeErrors.transactionTooLarge(s.edge.settings.queryBufferLimit));
      return;
    }
    this.frames.push(frame);
    if (s.edge.cache !== undefined) this.noteWrites(s, batch, i, spec);
    s.reply(QUEUED);
  }

  /** An unknown command inside MULTI: Redis's own error, and the transaction is aborted at EXEC. */
  queueUnknown(s: CommandSession, batch: CommandBatch, i: number): void {
    const args = batch.args(i);
    const rest = args.slice(1).map((a) => `'${a.toString('utf8', 0, Math.min(a.length, 128))}' `).join('');
    this.dirty = true;
    s.reply(Buffer.from(`-ERR unknown command '${args[0].toString('utf8', 0, 128)}', with args beginning with: ${rest}\r\n`.replace(/[\r\n]+(?!$)/g, ' ')));
  }

  private noteWrites(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
    if (!mayWrite(spec) || this.written === null) return;
    const keys = writtenKeys(s, batch, i, spec);
    if (keys === null) this.written = null;
    else this.written.push(...keys);
  }

  private keysFit(s: CommandSession, group: number): boolean {
    if (group === MIXED) return this.reject(s, RedisEdgeErrors.crossSlot(s.edge.routes.cluster ? 'slot' : 'shard'));
    if (group === UNMAPPED) return this.reject(s, RedisEdgeErrors.keyUnmapped());
    if (this.group >= 0 && this.group !== group) return this.reject(s, RedisEdgeErrors.crossSlot(s.edge.routes.cluster ? 'slot' : 'shard'));
    this.group = group;
    return true;
  }

  private reject(s: CommandSession, err: Error): false {
    this.dirty = true;
    s.replyError(err, 'transaction');
    return false;
  }
}

/** MULTI, the queued commands and EXEC on one connection; the client sees only EXEC's reply. */
class TransactionRun implements ReplySink {
  private readonly span: Span;
  private redirected: Redirect | undefined;
  private redirectedBy: BackendLink | undefined;
  private attempts = 0;
  private done = false;

  constructor(
    private readonly s: CommandSession,
    private readonly frames: readonly Buffer[],
    private route: EndpointRoute,
    private readonly pinned: BackendLink | undefined,
  ) {
    this.span = s.edge.tracer.startSpan('EXEC', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'redis', 'db.operation.name': 'EXEC', 'db.operation.batch.size': frames.length, 'dbproxy.watched': pinned !== undefined } }, s.spans?.context());
  }

  start(seq: number, asking: boolean): void {
    this.span.setAttribute('server.address', this.route.endpoint.address);
    const link = this.pinned ?? this.s.linkFor(this.route);
    const flags = this.s.edge.routes.cluster && !this.pinned ? SendFlag.Redirectable : 0;
    if (asking) link.send(this, seq, -2, SendFlag.Skip, 0, ASKING, 0, ASKING.length);
    link.send(this, seq, 0, 0, 0, MULTI, 0, MULTI.length);
    this.frames.forEach((f, p) => link.send(this, seq, p + 1, flags, 0, f, 0, f.length));
    link.send(this, seq, this.frames.length + 1, 0, 0, EXEC, 0, EXEC.length);
  }

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    if (part !== this.frames.length + 1 || this.done) return;
    const redirect = this.redirected;
    if (redirect && this.attempts < MAX_REDIRECTS && !this.s.closed) return this.retry(seq, redirect);
    this.done = true;
    this.span.end();
    if (redirect) return this.s.complete(seq, errorReply(RedisEdgeErrors.transactionMoved()));
    this.s.deliver(seq, -1, buf, start, end);
  }

  fail(seq: number, _part: number, err: Error): void {
    if (this.done) return;
    this.done = true;
    this.span.recordException(err);
    this.span.end();
    logIfInternal(this.s.edge.logger, err, { listener: this.s.listener });
    this.s.complete(seq, errorReply(err));
  }

  redirect(_seq: number, _part: number, redirect: Redirect, _frame: SentFrame, _flags: number, via: BackendLink): boolean {
    if (!this.redirected) {
      this.redirected = redirect;
      this.redirectedBy = via;
    }
    return true;
  }

  private retry(seq: number, redirect: Redirect): void {
    this.attempts++;
    this.span.addEvent(`retry after ${redirect.kind}`);
    this.redirected = undefined;
    const via = this.redirectedBy as BackendLink;
    if (redirect.kind === 'moved') this.route = this.s.edge.noteMoved(redirect.slot, addressOf(redirect, via));
    else if (redirect.kind === 'ask') this.route = this.s.edge.routeAt(addressOf(redirect, via));
    if (redirect.kind === 'moved' || redirect.kind === 'ask') return this.start(seq, redirect.kind === 'ask');
    setTimeout(() => !this.s.closed && this.start(seq, false), 2 << this.attempts).unref();
  }
}

/** WATCH's own reply; a redirect moves the pin to the node that serves the keys now. */
class WatchSink implements ReplySink {
  constructor(private readonly s: CommandSession, private readonly group: number) {}
  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    this.s.deliver(seq, part, buf, start, end);
  }
  fail(seq: number, part: number, err: Error): void {
    this.s.watch = undefined;
    this.s.fail(seq, part, err);
  }
  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    const host = {
      closed: this.s.closed,
      edge: this.s.edge,
      resend: (owner: ReplySink, q: number, p: number, route: EndpointRoute, asking: boolean, f: SentFrame, fl: number, attempt: number) => {
        const link = this.s.ownLink(route);
        this.s.watch = { group: this.group, route, link };
        if (asking) link.send(owner, 0, -1, SendFlag.Skip, 0, ASKING, 0, ASKING.length);
        link.send(owner, q, p, fl, attempt, f.buf, f.start, f.end);
      },
    };
    return followRedirect(host, this, seq, part, redirect, frame, flags, via);
  }
}

function exec(s: CommandSession): void {
  if (!s.gates.empty) return s.retryAfterDrain();
  const tx = s.tx as TransactionQueue;
  const pin = s.watch;
  s.tx = undefined;
  s.watch = undefined;
  s.machine.transition('transaction', 'ready', 'EXEC');
  if (tx.dirty) {
    if (pin && !pin.link.closed) pin.link.send(s, 0, -1, SendFlag.Skip, 0, UNWATCH, 0, UNWATCH.length);
    return s.replyError(RedisEdgeErrors.execAbort());
  }
  if (pin?.link.closed) return s.replyError(RedisEdgeErrors.watchLost(pin.route.endpoint.address));
  const route = pin?.route ?? (tx.group >= 0 ? s.routeOfGroup(tx.group) : s.homeRoute());
  if (!route) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', tx.group >= 0 ? s.edge.routes.nameOfGroup(tx.group) : s.edge.routes.shardName()));
  if (s.edge.cache !== undefined) invalidateWrite(s.edge.cache, tx.written);
  new TransactionRun(s, tx.frames, route, pin?.link).start(s.ring.reserve(), false);
}

function watch(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  if (s.tx) return s.replyError(RedisEdgeErrors.watchInMulti());
  if (batch.argCount[i] < 2) return s.replyError(RedisEdgeErrors.wrongArguments('watch'));
  spec.keys.find(batch, i, s.keys);
  const group = s.edge.routes.single ? s.edge.routes.home : groupOfKeys(s, batch, i);
  if (group === MIXED || (s.watch && s.watch.group !== group)) return s.replyError(RedisEdgeErrors.crossSlot(s.edge.routes.cluster ? 'slot' : 'shard'), 'cross_slot');
  if (group === UNMAPPED) return s.replyError(RedisEdgeErrors.keyUnmapped(), 'unmapped_key');
  if (!s.own && s.ring.outstanding > 0) return s.retryAfterDrain();
  const route = s.routeOfGroup(group);
  if (!route) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', s.edge.routes.nameOfGroup(group)));
  const link = s.ownLink(route);
  s.watch = { group, route, link };
  link.send(new WatchSink(s, group), s.ring.reserve(), -1, s.edge.routes.cluster ? SendFlag.Redirectable : 0, 0, batch.buffer, batch.frameStart[i], batch.frameEnd[i]);
}

export function transactionCommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  switch (spec.name) {
    case 'multi':
      if (s.tx) return s.replyError(RedisEdgeErrors.multiNested());
      s.tx = new TransactionQueue(s.watch?.group ?? -1);
      s.machine.transition('ready', 'transaction', 'MULTI');
      return s.reply(OK);
    case 'exec':
      return s.tx ? exec(s) : s.replyError(RedisEdgeErrors.execWithoutMulti());
    case 'discard':
      if (!s.tx) return s.replyError(RedisEdgeErrors.discardWithoutMulti());
      s.tx = undefined;
      s.machine.transition('transaction', 'ready', 'DISCARD');
      unwatch(s, false);
      return;
    case 'unwatch':
      if (s.tx) return s.tx.queue(s, batch, i, spec);
      return unwatch(s, true);
    case 'watch':
      return watch(s, batch, i, spec);
    default:
      return s.replyError(RedisEdgeErrors.unsupported(spec.display, 'no transaction handling'), 'unsupported');
  }
}

/** UNWATCH (and DISCARD): the pinned connection forgets its watched keys; the reply is +OK. */
function unwatch(s: CommandSession, forwardReply: boolean): void {
  const pin = s.watch;
  s.watch = undefined;
  if (pin && !pin.link.closed && forwardReply) return pin.link.send(s, s.ring.reserve(), -1, 0, 0, UNWATCH, 0, UNWATCH.length);
  if (pin && !pin.link.closed) pin.link.send(s, 0, -1, SendFlag.Skip, 0, UNWATCH, 0, UNWATCH.length);
  s.reply(OK);
}
