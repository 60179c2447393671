// A session's own command answered TRYAGAIN or CLUSTERDOWN while it was the newest in flight: it
// is retried after 2, 4, ... 64 ms, then (a multi-key command) key by key, and until its reply is
// in, every later command of the session waits (an any-slot gate), so nothing overtakes the retry.
import type { Redirect } from '@dbproxy/resp';
import { errorReply, logIfInternal } from '../errors';
import type { BackendLink } from '../io/backend-link';
import type { ReplySink, SentFrame } from '../io/reply-sink';
import { followOrSplit } from './key-by-key';
import type { CommandSession } from './session';
import { ANY_GROUP } from './slot-gates';

export class RetriedCommand implements ReplySink {
  private done = false;

  constructor(private readonly s: CommandSession) {
    s.gates.open(ANY_GROUP);
  }

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    if (this.done) return;
    this.done = true;
    this.s.gates.close(ANY_GROUP);
    this.s.deliver(seq, part, buf, start, end);
  }

  fail(seq: number, part: number, err: Error): void {
    logIfInternal(this.s.edge.logger, err, { listener: this.s.listener });
    const reply = errorReply(err);
    this.deliver(seq, part, reply, 0, reply.length);
  }

  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    return followOrSplit(this.s, this, seq, part, redirect, frame, flags, via);
  }
}
