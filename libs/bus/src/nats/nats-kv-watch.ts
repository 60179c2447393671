// A JetStream KV watch that outlives outages: restarted after every reconnection from the
// revision after the last one delivered, so the latest value arrives and nothing arrives twice.
import type { KV, KvEntry as NatsKvEntry } from 'nats';
import { settle } from '../delivery';
import { reportDropped } from '../diagnostics';
import type { KvEntry, Subscription } from '../types';
import type { NatsConnectionKeeper } from './connection';
import type { NatsKvStore } from './nats-kv';

type Stoppable = { stop(): void };

export function fromNatsEntry(e: NatsKvEntry): KvEntry {
  return { key: e.key, revision: e.revision, value: e.operation === 'PUT' ? e.value : undefined, created: e.created };
}

export class NatsKvWatch implements Subscription {
  readonly ready: Promise<void>;
  private markReady: () => void = () => undefined;
  private lastRevision = 0;
  private stopped = false;
  private restartRequested = false;
  private iterator: Stoppable | undefined;
  private wake: (() => void) | undefined;
  private readonly stopListening: () => void;

  constructor(
    private readonly store: NatsKvStore,
    private readonly keeper: NatsConnectionKeeper,
    private readonly pattern: string,
    private readonly handler: (entry: KvEntry) => void | Promise<void>,
    private readonly retryWaitMs: number,
  ) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    // A reconnection may come back to a restarted server whose consumers are gone: start over.
    this.stopListening = keeper.onConnected(() => {
      this.restartRequested = true;
      this.iterator?.stop();
    });
    void this.run();
  }

  unsubscribe(): void {
    this.stopped = true;
    this.stopListening();
    this.iterator?.stop();
    this.wake?.();
    this.markReady();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.keeper.status.value === 'disconnected') await this.keeper.untilConnected();
      if (this.stopped || this.keeper.status.value === 'closed') break;
      try {
        this.restartRequested = false;
        await this.follow(await this.store.open('watch'));
        // Ended without a reconnection asking for it: do not spin, wait a little first.
        if (!this.restartRequested && !this.stopped) await this.pause();
      } catch {
        // The server is away or JetStream is still recovering; rebind and try again shortly.
        this.store.invalidate();
        await this.pause();
      }
    }
  }

  private async follow(kv: KV): Promise<void> {
    if (this.lastRevision > 0 && (await kv.status()).streamInfo.state.last_seq < this.lastRevision) {
      this.lastRevision = 0; // The bucket was recreated: its revisions restarted.
    }
    const iterator = await kv.watch({
      key: this.pattern,
      ...(this.lastRevision > 0 ? { resumeFromRevision: this.lastRevision + 1 } : {}),
      initializedFn: () => this.markReady(),
    });
    this.iterator = iterator;
    // Stopped, or reconnected while the consumer was being created (possibly on the old server).
    if (this.stopped || this.restartRequested) iterator.stop();
    for await (const e of iterator) {
      if (this.stopped) break;
      if (e.revision <= this.lastRevision) continue;
      this.lastRevision = e.revision;
      this.deliver(fromNatsEntry(e));
    }
  }

  private deliver(entry: KvEntry): void {
    const onError = (err: unknown): void => reportDropped(`$KV.${this.store.bucket}.${entry.key}`, 'handler-error', err);
    try {
      settle(this.handler(entry), onError);
    } catch (err) {
      onError(err);
    }
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.retryWaitMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
