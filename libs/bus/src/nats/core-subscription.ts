// A core NATS subscription that survives connection replacement: attached to each new
// connection (nats.js itself re-subscribes after a plain reconnect).
import type { Msg, Subscription as NatsSubscription } from 'nats';
import type { Subscription } from '../types';
import type { NatsConnectionKeeper } from './connection';

export class CoreSubscription implements Subscription {
  readonly ready: Promise<void>;
  private markReady: () => void = () => undefined;
  private sub: NatsSubscription | undefined;
  private readonly stopListening: () => void;

  constructor(
    keeper: NatsConnectionKeeper,
    private readonly pattern: string,
    private readonly queue: string | undefined,
    private readonly onMessage: (m: Msg) => void,
  ) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    this.stopListening = keeper.onConnected((nc, fresh) => {
      if (!fresh) return;
      this.sub = nc.subscribe(this.pattern, {
        ...(this.queue === undefined ? {} : { queue: this.queue }),
        callback: (err, msg) => {
          if (!err) this.onMessage(msg);
        },
      });
      nc.flush().then(this.markReady, () => undefined);
    });
  }

  unsubscribe(): void {
    this.stopListening();
    try {
      this.sub?.unsubscribe();
    } catch {
      // Already closed with its connection.
    }
    this.sub = undefined;
    this.markReady();
  }
}
