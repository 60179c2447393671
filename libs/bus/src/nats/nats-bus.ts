// The bus over NATS: core subjects for publish/subscribe/request, JetStream KV for state.
// Outages never throw at callers: publishes wait in a bounded buffer, subscriptions and
// watches re-attach when the connection returns.
import { ErrorCode, headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type NatsError } from 'nats';
import { answerRequest, deliverMessage, ErrorReplyHeaders } from '../delivery';
import { reportDropped } from '../diagnostics';
import { BusErrors } from '../errors';
import { assertHeaders, assertPattern, assertSubject } from '../subjects';
import { withTraceContext } from '../trace';
import type { Bus, BusMessage, BusStatus, KvOptions, KvStore, MessageHandler, RequestHandler, RequestOptions, ServeOptions, Subscription } from '../types';
import { NatsConnectionKeeper, type ConnectFailure, type NatsConnectionOptions } from './connection';
import { NatsKvStore } from './nats-kv';
import { CoreSubscription } from './core-subscription';
import { PublishBuffer, type PendingPublish } from './publish-buffer';

export interface NatsBusOptions extends NatsConnectionOptions {
  readonly maxPayloadBytes: number;
  /** Bytes published while disconnected that are kept for the reconnection; beyond it publishes are dropped. */
  readonly reconnectBufferBytes: number;
}

const DEFAULT_QUEUE = 'dbproxy';

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  readonly name: string;
  private readonly keeper: NatsConnectionKeeper;
  private readonly live = new Set<{ unsubscribe(): void }>();
  private readonly pending: PublishBuffer;

  constructor(private readonly opts: NatsBusOptions) {
    this.name = opts.name;
    this.pending = new PublishBuffer(opts.reconnectBufferBytes);
    this.keeper = new NatsConnectionKeeper(opts);
    // After the other listeners, so subscriptions are re-attached before the backlog goes out.
    this.keeper.onConnected((nc) => queueMicrotask(() => this.sendBacklog(nc)));
  }

  publish(subject: string, payload: Uint8Array, headers?: Record<string, string>): void {
    this.checkOutgoing(subject, payload, headers);
    const nc = this.keeper.current();
    const state = this.keeper.status.value;
    if (state === 'closed') return reportDropped(subject, 'publish-failed', 'bus closed');
    // nats.js keeps a reference until the socket write; copy so a reused buffer cannot change it.
    const item = { subject, payload: payload.slice(), headers: toNatsHeaders(withTraceContext(headers)) };
    if (!nc || state === 'disconnected') {
      if (!this.pending.add(item)) reportDropped(subject, 'publish-failed', 'reconnect buffer full');
      return;
    }
    this.send(nc, item);
  }

  subscribe(pattern: string, handler: MessageHandler): Subscription {
    return this.register(pattern, undefined, (m) => deliverMessage(handler, toBusMessage(m, m.subject)));
  }

  serve(pattern: string, handler: RequestHandler, opts?: ServeOptions): Subscription {
    return this.register(pattern, opts?.queue ?? DEFAULT_QUEUE, (m) => {
      void answerRequest(handler, toBusMessage(m, m.subject)).then((reply) => {
        if (!m.reply) return;
        try {
          m.respond(reply.data, { headers: toNatsHeaders(reply.headers) });
        } catch (err) {
          reportDropped(m.reply, 'publish-failed', err);
        }
      });
    });
  }

  async request(subject: string, payload: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    this.checkOutgoing(subject, payload, opts.headers);
    const nc = this.connection(`request to ${subject}`);
    let reply: Msg;
    try {
      reply = await nc.request(subject, payload.slice(), { timeout: opts.timeoutMs, headers: toNatsHeaders(withTraceContext(opts.headers)) });
    } catch (err) {
      throw requestError(subject, opts.timeoutMs, err);
    }
    const msg = toBusMessage(reply, subject);
    const code = msg.headers[ErrorReplyHeaders.code];
    if (code !== undefined) throw BusErrors.remote(subject, code, msg.headers[ErrorReplyHeaders.message] ?? '');
    return msg;
  }

  async kv(bucket: string, opts?: KvOptions): Promise<KvStore> {
    if (this.keeper.status.value === 'closed') throw BusErrors.closed(`kv ${bucket}`);
    const store = new NatsKvStore(bucket, opts, this.keeper, this.opts.reconnectWaitMs, (sub) => this.track(sub));
    // Create or bind the bucket now when we can, so configuration errors surface here.
    if (this.keeper.status.value === 'connected') await store.open();
    return store;
  }

  status(): BusStatus {
    return this.keeper.status.value;
  }

  onStatus(listener: (status: BusStatus) => void): () => void {
    return this.keeper.status.listen(listener);
  }

  /** Also rejects, at once, when NATS refuses the credentials or TLS fails (DBP_ERR_BUS_AUTH_REFUSED / _TLS_FAILED). */
  waitForConnection(timeoutMs: number): Promise<void> {
    const target = this.opts.servers.join(',');
    const refusal = (f: ConnectFailure): Error => (f.kind === 'auth' ? BusErrors.authRefused(target, f.detail) : BusErrors.tlsFailed(target, f.detail));
    const known = this.keeper.failure();
    if (known && this.keeper.status.value === 'disconnected') return Promise.reject(refusal(known));
    let remove = (): void => undefined;
    const refused = new Promise<never>((_, reject) => {
      remove = this.keeper.onFailure((f) => reject(refusal(f)));
    });
    return Promise.race([this.keeper.status.waitFor(timeoutMs), refused]).finally(() => remove());
  }

  async close(): Promise<void> {
    for (const sub of [...this.live]) sub.unsubscribe();
    await this.keeper.close();
    for (const item of this.pending.take()) reportDropped(item.subject, 'publish-failed', 'bus closed before NATS returned');
  }

  private send(nc: NatsConnection, item: PendingPublish): void {
    try {
      nc.publish(item.subject, item.payload, { headers: item.headers });
    } catch (err) {
      if ((err as NatsError).code !== ErrorCode.MaxPayloadExceeded) return reportDropped(item.subject, 'publish-failed', err);
      throw BusErrors.payloadTooLarge(item.subject, item.payload.byteLength, nc.info?.max_payload ?? 0);
    }
  }

  private sendBacklog(nc: NatsConnection): void {
    for (const item of this.pending.take()) {
      try {
        this.send(nc, item);
      } catch (err) {
        reportDropped(item.subject, 'publish-failed', err);
      }
    }
  }

  private register(pattern: string, queue: string | undefined, onMessage: (m: Msg) => void): Subscription {
    assertPattern(pattern);
    if (this.keeper.status.value === 'closed') throw BusErrors.closed(`subscribe to ${pattern}`);
    return this.track(new CoreSubscription(this.keeper, pattern, queue, onMessage));
  }

  private track(sub: Subscription): Subscription {
    const tracked = {
      ready: sub.ready,
      unsubscribe: (): void => {
        this.live.delete(tracked);
        sub.unsubscribe();
      },
    };
    this.live.add(tracked);
    return tracked;
  }

  private connection(operation: string): NatsConnection {
    const nc = this.keeper.current();
    const state = this.keeper.status.value;
    if (state === 'closed') throw BusErrors.closed(operation);
    if (!nc || state !== 'connected') throw BusErrors.unavailable(operation);
    return nc;
  }

  private checkOutgoing(subject: string, payload: Uint8Array, headers: Record<string, string> | undefined): void {
    assertSubject(subject);
    assertHeaders(headers);
    if (payload.byteLength > this.opts.maxPayloadBytes) throw BusErrors.payloadTooLarge(subject, payload.byteLength, this.opts.maxPayloadBytes);
  }
}

function requestError(subject: string, timeoutMs: number, err: unknown): Error {
  const code = (err as NatsError).code;
  if (code === ErrorCode.Timeout) return BusErrors.timeout(subject, timeoutMs);
  if (code === ErrorCode.NoResponders) return BusErrors.noResponders(subject);
  return BusErrors.requestFailed.withCause(err, subject, String(code ?? err));
}

function toNatsHeaders(headers: Record<string, string> | undefined): MsgHdrs | undefined {
  if (!headers) return undefined;
  const entries = Object.entries(headers);
  if (entries.length === 0) return undefined;
  const h = natsHeaders();
  for (const [name, value] of entries) h.set(name, value);
  return h;
}

/** `subject` is the request subject for replies (not the inbox), as on the embedded bus. */
export function toBusMessage(m: Msg, subject: string): BusMessage {
  const headers: Record<string, string> = {};
  if (m.headers) {
    for (const [name, values] of m.headers) headers[name] = values[0] ?? '';
  }
  return { subject, data: m.data, headers: Object.freeze(headers) };
}
