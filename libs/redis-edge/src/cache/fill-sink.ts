// The owner of a fill-armed GET/MGET's replies on the master's fill connection: CLIENT CACHING YES's
// reply (a refusal poisons the fill and stops fills there for a while), then the command's reply,
// stored under the fill tickets and passed on to the session (or to the fan-out of a cross-slot MGET part).
import { aggregateElements, encodeCommand, ReplyScanner, type Redirect } from '@dbproxy/resp';
import type { BackendLink } from '../io/backend-link';
import type { ReplySink, SentFrame } from '../io/reply-sink';
import type { FillLinks } from './fill-links';
import type { FillTicket, ReplyStore } from './reply-store';

export const CACHING_YES = encodeCommand(['CLIENT', 'CACHING', 'YES']);
/** The part number CLIENT CACHING YES is sent with (the command keeps its own part). */
export const OPT_IN_PART = -7;
const MINUS = 0x2d;
const DOLLAR = 0x24;
const elementScanner = new ReplyScanner({});

/**
 * Whether `s` may send a fill on a fill connection now: only when none of its earlier commands is
 * still in flight (a fill cannot overtake the session's own write on the shared connection).
 */
export function mayFillApart(s: { readonly ring: { readonly outstanding: number } }): boolean {
  return s.ring.outstanding === 0;
}

export class FillSink implements ReplySink {
  constructor(
    private readonly store: ReplyStore,
    private readonly links: FillLinks,
    /** Where the command's reply goes: the session, or a fan-out (part of a cross-slot MGET). */
    private readonly session: ReplySink,
    /** The master's fill connection. */
    readonly link: BackendLink,
    /** GET: one ticket; MGET: one per key position (undefined where another fill is in flight). */
    private readonly tickets: readonly (FillTicket | undefined)[],
    private readonly mget: boolean,
  ) {}

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    if (part === OPT_IN_PART) {
      if (buf[start] === MINUS) {
        this.abandon();
        this.links.refused(this.link, buf.toString('utf8', start + 1, Math.min(end - 2, start + 200)));
      }
      return;
    }
    this.keep(buf, start, end);
    this.session.deliver(seq, part, buf, start, end);
  }

  fail(seq: number, part: number, err: Error): void {
    this.abandon();
    if (part !== OPT_IN_PART) this.session.fail(seq, part, err);
  }

  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    // Redirect retries go on the shared connections, carry no opt-in and never fill.
    this.abandon();
    return this.session.redirect(seq, part, redirect, frame, flags, via);
  }

  private keep(buf: Buffer, start: number, end: number): void {
    const store = this.store;
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
    for (const t of this.tickets) if (t !== undefined) this.store.abandon(t);
  }
}
