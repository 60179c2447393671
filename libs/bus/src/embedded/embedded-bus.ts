// The embedded bus: a service's handle on an in-process EmbeddedBroker. Several services in one
// process share a broker; closing one handle removes only that service's subscriptions.
import { answerRequest, deliverMessage, ErrorReplyHeaders, type Reply } from '../delivery';
import { reportDropped } from '../diagnostics';
import { BusErrors } from '../errors';
import { ConnectionStatus } from '../status';
import { assertHeaders, assertPattern, assertSubject } from '../subjects';
import { withTraceContext } from '../trace';
import type { Bus, BusMessage, BusStatus, KvOptions, KvStore, MessageHandler, RequestHandler, RequestOptions, ServeOptions, Subscription } from '../types';
import { type BrokerDelivery, type EmbeddedBroker } from './broker';
import { DeliveryQueue } from './delivery-queue';
import { EmbeddedKvStore } from './embedded-kv';

export interface EmbeddedBusOptions {
  readonly name: string;
  readonly broker: EmbeddedBroker;
  readonly maxPayloadBytes: number;
}

const DEFAULT_QUEUE = 'dbproxy';

export class EmbeddedBus implements Bus {
  readonly kind = 'embedded' as const;
  readonly name: string;
  private readonly broker: EmbeddedBroker;
  private readonly maxPayloadBytes: number;
  private readonly state = new ConnectionStatus('connected', 'embedded');
  /** Everything this handle registered, stopped on close. */
  private readonly live = new Set<Subscription>();

  constructor(opts: EmbeddedBusOptions) {
    this.name = opts.name;
    this.broker = opts.broker;
    this.maxPayloadBytes = opts.maxPayloadBytes;
  }

  publish(subject: string, payload: Uint8Array, headers?: Record<string, string>): void {
    this.checkOutgoing(subject, payload, headers);
    if (this.state.value === 'closed') {
      reportDropped(subject, 'publish-failed', 'bus closed');
      return;
    }
    this.broker.dispatch({ msg: this.message(subject, payload, headers), reply: undefined });
  }

  subscribe(pattern: string, handler: MessageHandler): Subscription {
    return this.register(pattern, undefined, (d) => deliverMessage(handler, d.msg));
  }

  serve(pattern: string, handler: RequestHandler, opts?: ServeOptions): Subscription {
    return this.register(pattern, opts?.queue ?? DEFAULT_QUEUE, (d) => {
      void answerRequest(handler, d.msg).then((reply) => d.reply?.(reply));
    });
  }

  request(subject: string, payload: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    try {
      this.checkOutgoing(subject, payload, opts.headers); // rejects, like the NATS bus, never throws
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.state.value === 'closed') return Promise.reject(BusErrors.closed(`request to ${subject}`));
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => settle(() => reject(BusErrors.timeout(subject, opts.timeoutMs))), opts.timeoutMs);
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        fn();
      };
      const onReply = (reply: Reply): void => settle(() => this.resolveReply(subject, reply, resolve, reject));
      const reached = this.broker.dispatch({ msg: this.message(subject, payload, opts.headers), reply: onReply });
      if (reached === 0) settle(() => reject(BusErrors.noResponders(subject)));
    });
  }

  async kv(bucket: string, opts?: KvOptions): Promise<KvStore> {
    if (this.state.value === 'closed') throw BusErrors.closed(`kv ${bucket}`);
    return new EmbeddedKvStore(bucket, opts, this.broker, {
      isClosed: () => this.state.value === 'closed',
      track: (sub) => this.track(sub),
    });
  }

  status(): BusStatus {
    return this.state.value;
  }

  onStatus(listener: (status: BusStatus) => void): () => void {
    return this.state.listen(listener);
  }

  waitForConnection(timeoutMs: number): Promise<void> {
    return this.state.waitFor(timeoutMs);
  }

  async close(): Promise<void> {
    for (const sub of [...this.live]) sub.unsubscribe();
    this.state.set('closed');
  }

  private register(pattern: string, queue: string | undefined, run: (d: BrokerDelivery) => void): Subscription {
    assertPattern(pattern);
    if (this.state.value === 'closed') throw BusErrors.closed(`subscribe to ${pattern}`);
    const pending = new DeliveryQueue<BrokerDelivery>(this.broker.limits.maxPendingPerSubscription, run, (d) => d.msg.subject);
    const remove = this.broker.add({ pattern, queue, deliver: (d) => pending.push(d) });
    return this.track({
      ready: Promise.resolve(),
      unsubscribe: () => {
        remove();
        pending.stop();
      },
    });
  }

  private track(sub: Subscription): Subscription {
    this.live.add(sub);
    return {
      ready: sub.ready,
      unsubscribe: () => {
        this.live.delete(sub);
        sub.unsubscribe();
      },
    };
  }

  private checkOutgoing(subject: string, payload: Uint8Array, headers: Record<string, string> | undefined): void {
    assertSubject(subject);
    assertHeaders(headers);
    if (payload.byteLength > this.maxPayloadBytes) throw BusErrors.payloadTooLarge(subject, payload.byteLength, this.maxPayloadBytes);
  }

  private message(subject: string, payload: Uint8Array, headers: Record<string, string> | undefined): BusMessage {
    // Copied so a publisher reusing its buffer cannot change what subscribers see, as on NATS.
    return { subject, data: Uint8Array.from(payload), headers: Object.freeze(withTraceContext(headers)) };
  }

  private resolveReply(subject: string, reply: Reply, resolve: (msg: BusMessage) => void, reject: (err: Error) => void): void {
    const code = reply.headers?.[ErrorReplyHeaders.code];
    if (code !== undefined) {
      reject(BusErrors.remote(subject, code, reply.headers?.[ErrorReplyHeaders.message] ?? ''));
      return;
    }
    resolve({ subject, data: reply.data, headers: Object.freeze({ ...reply.headers }) });
  }
}
