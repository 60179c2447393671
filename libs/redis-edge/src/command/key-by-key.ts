// A multi-key command whose TRYAGAIN outlasted its retries (its keys are split between the source
// and the target of a migrating slot): re-issued one key at a time, each following its own ASK or
// MOVED, at most 256 in flight, and the replies merged into the reply of the whole command (or of
// its fan-out part).
import { Buffer } from 'node:buffer';
import { decodeReply, encodeCommand, type Redirect } from '@dbproxy/resp';
import { errorReply, logIfInternal, RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import { SendFlag, type ReplySink, type SentFrame } from '../io/reply-sink';
import { RequestPolicy } from './command-flags';
import { mergeReplies, multiKeyMerge } from './merge';
import { followRedirect, MAX_RETRIES } from './redirects';
import type { CommandSession } from './session';

export const KEY_BY_KEY_WINDOW = 256;

/** A redirect or retry of (seq, part) of `owner`: key by key once a multi-key TRYAGAIN outlasted its retries, else followed. */
export function followOrSplit(s: CommandSession, owner: ReplySink, seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
  if (redirect.kind === 'tryagain' && frame.attempt + 1 > MAX_RETRIES) {
    const split = keyByKeyFor(s, owner, seq, part, frame);
    if (split) {
      split.start();
      return true;
    }
  }
  return followRedirect(s, owner, seq, part, redirect, frame, flags, via);
}

/**
 * The key-by-key resend of a multi-key command frame (MGET, DEL, EXISTS, MSET, ... : COMMAND INFO's
 * multi_shard policy, keys from argument 1), or undefined when the command is not one or names one key.
 */
export function keyByKeyFor(s: CommandSession, parent: ReplySink, seq: number, part: number, frame: SentFrame): KeyByKey | undefined {
  const value = decodeReply(frame.buf, frame.start, frame.end);
  if (value.type !== 'array') return undefined;
  const args = value.items.map((item) => (item.type === 'bulk' ? item.value : Buffer.alloc(0)));
  const spec = args.length > 0 ? s.edge.table?.lookup(args[0].toString('latin1')) : undefined;
  if (!spec || spec.requestPolicy !== RequestPolicy.MultiShard) return undefined;
  const split = singleKeyFrames(args, spec.keys.step);
  return split ? new KeyByKey(s, parent, seq, part, split.frames, split.keys, multiKeyMerge(spec)) : undefined;
}

/** The single-key commands of a multi-key command's arguments: `step` arguments per key from argument 1. */
function singleKeyFrames(args: readonly Buffer[], step: number): { frames: Buffer[]; keys: Buffer[] } | undefined {
  const count = Math.floor((args.length - 1) / step);
  if (count < 2 || 1 + count * step !== args.length) return undefined;
  const frames: Buffer[] = [];
  const keys: Buffer[] = [];
  for (let k = 0; k < count; k++) {
    const own = args.slice(1 + k * step, 1 + (k + 1) * step);
    frames.push(encodeCommand([args[0], ...own]));
    keys.push(own[0]);
  }
  return { frames, keys };
}

export class KeyByKey implements ReplySink {
  private readonly replies: Buffer[];
  private next = 0;
  private left: number;

  constructor(
    private readonly s: CommandSession,
    private readonly parent: ReplySink,
    private readonly seq: number,
    private readonly part: number,
    private readonly frames: readonly Buffer[],
    private readonly keys: readonly Buffer[],
    private readonly merge: number,
  ) {
    this.replies = new Array<Buffer>(frames.length);
    this.left = frames.length;
  }

  start(): void {
    this.s.edge.metrics.retries.inc({ reason: 'key_by_key' });
    while (this.next < this.frames.length && this.next < KEY_BY_KEY_WINDOW) this.sendNext();
  }

  deliver(_seq: number, k: number, buf: Buffer, start: number, end: number): void {
    if (this.replies[k] !== undefined) return;
    this.replies[k] = Buffer.from(buf.subarray(start, end));
    if (this.next < this.frames.length) this.sendNext();
    if (--this.left > 0) return;
    const merged = mergeReplies(this.merge, this.replies, this.replies.map((_, i) => [i]), this.replies.length);
    this.parent.deliver(this.seq, this.part, merged, 0, merged.length);
  }

  fail(seq: number, k: number, err: Error): void {
    logIfInternal(this.s.edge.logger, err, { listener: this.s.listener });
    const reply = errorReply(err);
    this.deliver(seq, k, reply, 0, reply.length);
  }

  redirect(seq: number, k: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    return followRedirect(this.s, this, seq, k, redirect, frame, flags, via);
  }

  private sendNext(): void {
    const k = this.next++;
    const key = this.keys[k];
    const group = this.s.edge.routes.groupOfKey(key, 0, key.length);
    const route = this.s.routeOfGroup(group);
    if (!route) return this.fail(this.seq, k, RedisEdgeErrors.noBackend('primary', this.s.edge.routes.nameOfGroup(group)));
    const frame = this.frames[k];
    this.s.linkFor(route).send(this, this.seq, k, SendFlag.Redirectable, 0, frame, 0, frame.length);
  }
}
