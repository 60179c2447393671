// The owner of a fill-armed GET/MGET's replies: CLIENT CACHING YES's reply (a refusal poisons the
// fill), then the command's reply, stored under the fill tickets and passed on to the session (or to
// the fan-out of a cross-slot MGET part).
import { aggregateElements, ReplyScanner, type Redirect } from '@dbproxy/resp';
import type { BackendLink } from '../io/backend-link';
import type { ReplySink, SentFrame } from '../io/reply-sink';
import type { ReplyCache } from './reply-cache';
import type { FillTicket } from './reply-store';

/** The part number CLIENT CACHING YES is sent with (the command itself is part -1). */
export const OPT_IN_PART = -7;
const MINUS = 0x2d;
const DOLLAR = 0x24;
const elementScanner = new ReplyScanner({});

export class FillSink implements ReplySink {
  constructor(
    private readonly cache: ReplyCache,
    /** Where the command's reply goes: the session, or a fan-out (part of a cross-slot MGET). */
    private readonly session: ReplySink,
    readonly link: BackendLink,
    /** GET: one ticket; MGET: one per key position (undefined where another fill is in flight). */
    private readonly tickets: readonly (FillTicket | undefined)[],
    private readonly mget: boolean,
  ) {}

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    if (part === OPT_IN_PART) {
      if (buf[start] === MINUS) {
        this.abandon();
        this.cache.trackingRefused(this.link, buf.toString('utf8', start + 1, Math.min(end - 2, start + 200)));
      }
      return;
    }
    this.store(buf, start, end);
    this.session.deliver(seq, part, buf, start, end);
  }

  fail(seq: number, part: number, err: Error): void {
    this.abandon();
    if (part !== OPT_IN_PART) this.session.fail(seq, part, err);
  }

  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    // Redirect retries carry no opt-in and never fill.
    this.abandon();
    return this.session.redirect(seq, part, redirect, frame, flags, via);
  }

  private store(buf: Buffer, start: number, end: number): void {
    const store = this.cache.store;
    const now = Date.now();
    if (!this.mget) {
      const ticket = this.tickets[0] as FillTicket;
      if (buf[start] === DOLLAR) store.fill(ticket, buf, start, end, false, now);
      else store.abandon(ticket);
      return;
    }
    let elements;
    try {
      elements = aggregateElements(buf, start, end, elementScanner);
    } catch {
      return this.abandon();
    }
    if (elements.count !== this.tickets.length) return this.abandon();
    for (let k = 0; k < this.tickets.length; k++) {
      const ticket = this.tickets[k];
      if (ticket === undefined) continue;
      const at = elements.start[k];
      // A nil from MGET may be a key of another type (GET answers WRONGTYPE): usable by MGET only.
      if (buf[at] === DOLLAR) store.fill(ticket, buf, at, elements.end[k], buf[at + 1] === MINUS, now);
      else store.abandon(ticket);
    }
  }

  private abandon(): void {
    for (const t of this.tickets) if (t !== undefined) this.cache.store.abandon(t);
  }
}
