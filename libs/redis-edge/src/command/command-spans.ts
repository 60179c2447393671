// A span per command-mode Redis command (libs/observability DbSpan): SERVER span from dispatch to
// the command's (last) reply, CLIENT child for the round trip to the node it was sent to (none for
// commands the edge answers itself or fans out: fanout.ts has its own span). An error reply marks
// both with its prefix (ERR, WRONGTYPE, MOVED...) as db.response.status_code. Built only for
// sessions of a process with a tracer provider, and only sampled commands get any attributes.
import type { Context, Tracer } from '@opentelemetry/api';
import { DbSpan, type DbOperation } from '@dbproxy/observability';
import type { CommandBatch } from '@dbproxy/resp';
import type { NodeEndpoint } from '../io/endpoint';

const MINUS = 0x2d; // '-'
const SPACE = 0x20;
const CR = 0x0d;
const MAX_OPERATION = 32;
const MAX_PREFIX = 32;
const SEQ_MASK = 0x3fffffff; // reply-ring.ts
const HALF_RING = 0x20000000;

/** The prefix of an error reply (`-WRONGTYPE Operation...` → WRONGTYPE); undefined for other replies. */
export function errorPrefix(buf: Buffer, start: number, end: number): string | undefined {
  if (buf[start] !== MINUS) return undefined;
  let i = start + 1;
  const stop = Math.min(end, i + MAX_PREFIX);
  while (i < stop && buf[i] !== SPACE && buf[i] !== CR) i++;
  return buf.toString('latin1', start + 1, i);
}

export class CommandSpans {
  /** Open spans by the sequence of the reply that ends them. */
  private readonly pending = new Map<number, DbSpan>();
  /** The command being dispatched (sampled), until dispatched() files it. */
  private current: DbSpan | null = null;
  private operation = '';
  private described = false;
  private firstSeq = 0;
  private answeredEarly = 0;
  private earlyError: string | undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly listener: string,
    /** The client's address (a PROXY protocol header's behind a load balancer). */
    private readonly clientAddress = '',
  ) {}

  /** Command `i` of `batch` is about to be dispatched; its first reply will be `nextSeq`. */
  begin(batch: CommandBatch, i: number, nextSeq: number): void {
    const span = DbSpan.start(this.tracer);
    this.current = span;
    if (span === null) return;
    this.operation = batch.argToString(i, 0, 'latin1').slice(0, MAX_OPERATION).toUpperCase();
    this.described = false;
    this.firstSeq = nextSeq;
    this.answeredEarly = 0;
    this.earlyError = undefined;
  }

  /** The context of the command being dispatched (for fanout, transaction and blocking spans). */
  context(): Context | undefined {
    return this.current?.context();
  }

  /** The command goes to `endpoint` (database `db` selected by the client, else the endpoint's). */
  sending(endpoint: NodeEndpoint, db: number | undefined): void {
    const span = this.current;
    if (span === null) return;
    this.describe(span, String(db ?? endpoint.db));
    span.setAttribute('dbproxy.shard', endpoint.shard);
    span.backendCall(endpoint.name, endpoint.address);
  }

  /** Dispatch returned: the span ends with the last reply the command reserved (now, if it has them all). */
  dispatched(nextSeq: number, deferred: boolean): void {
    const span = this.current;
    if (span === null) return;
    this.current = null;
    if (deferred) return; // dispatched again after the barrier: a new span then (this one is never ended, never exported)
    this.describe(span, undefined);
    const replies = (nextSeq - this.firstSeq) & SEQ_MASK;
    if (this.answeredEarly >= replies) return this.finish(span, this.earlyError);
    this.pending.set((nextSeq - 1) & SEQ_MASK, span);
  }

  /** The reply to `seq` is `buf[start, end)`. */
  replied(seq: number, buf: Buffer, start: number, end: number): void {
    if (this.current !== null && ((seq - this.firstSeq) & SEQ_MASK) < HALF_RING) {
      this.answeredEarly++;
      this.earlyError ??= errorPrefix(buf, start, end);
      return;
    }
    if (this.pending.size === 0) return;
    const span = this.pending.get(seq);
    if (span === undefined) return;
    this.pending.delete(seq);
    this.finish(span, errorPrefix(buf, start, end));
  }

  /** The session closed: spans still waiting for replies end as failed. */
  close(reason: string): void {
    for (const span of this.pending.values()) {
      span.fail('CLOSED', reason, 'client_closed');
      span.end();
    }
    this.pending.clear();
  }

  private describe(span: DbSpan, namespace: string | undefined): void {
    if (this.described) return;
    this.described = true;
    const op: DbOperation = { system: 'redis', operation: this.operation, ...(namespace !== undefined ? { namespace } : {}) };
    span.describe(op, { 'dbproxy.listener': this.listener, 'client.address': this.clientAddress });
  }

  private finish(span: DbSpan, error: string | undefined): void {
    if (error !== undefined) {
      span.backendDone(error);
      span.fail(error);
    }
    span.end();
  }
}
