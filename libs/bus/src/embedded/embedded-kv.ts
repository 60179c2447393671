// KvStore over an in-process EmbeddedBucket; watch delivery is asynchronous and ordered like NATS.
import { settle } from '../delivery';
import { reportDropped } from '../diagnostics';
import { BusErrors } from '../errors';
import { historyOf } from '../kv-options';
import { assertBucket, assertKey, assertKeyPattern } from '../subjects';
import type { KvEntry, KvOptions, KvPutOptions, KvStore, Subscription } from '../types';
import type { EmbeddedBroker } from './broker';
import type { EmbeddedBucket } from './bucket';
import { DeliveryQueue } from './delivery-queue';

export interface KvOwner {
  isClosed(): boolean;
  track(sub: Subscription): Subscription;
}

function copyOf(entry: KvEntry): KvEntry {
  return { ...entry, value: entry.value && Uint8Array.from(entry.value), created: new Date(entry.created) };
}

/** Queued after a watch's initial entries: reaching it means they were all delivered. */
const INITIALIZED = 'initialized';
type WatchItem = KvEntry | typeof INITIALIZED;

export class EmbeddedKvStore implements KvStore {
  private readonly store: EmbeddedBucket;
  private readonly limit: number;

  constructor(
    readonly bucket: string,
    opts: KvOptions | undefined,
    broker: EmbeddedBroker,
    private readonly owner: KvOwner,
  ) {
    assertBucket(bucket);
    this.store = broker.bucket(bucket, historyOf(bucket, opts));
    this.limit = broker.limits.maxPendingPerSubscription;
  }

  async get(key: string): Promise<KvEntry | undefined> {
    assertKey(key);
    this.checkOpen('get');
    const entry = this.store.get(key);
    return entry && copyOf(entry);
  }

  async put(key: string, value: Uint8Array, opts?: KvPutOptions): Promise<number> {
    assertKey(key);
    this.checkOpen('put');
    return this.store.put(key, value, opts?.expectedRevision);
  }

  async delete(key: string): Promise<void> {
    assertKey(key);
    this.checkOpen('delete');
    this.store.put(key, undefined, undefined);
  }

  async keys(pattern = '>'): Promise<string[]> {
    assertKeyPattern(pattern);
    this.checkOpen('keys');
    return this.store.keys(pattern);
  }

  watch(pattern: string, handler: (entry: KvEntry) => void | Promise<void>): Subscription {
    assertKeyPattern(pattern);
    this.checkOpen('watch');
    const onError = (err: unknown, entry: KvEntry): void => reportDropped(`$KV.${this.bucket}.${entry.key}`, 'handler-error', err);
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const run = (item: WatchItem): void => {
      if (item === INITIALIZED) return markReady();
      try {
        settle(handler(copyOf(item)), (err) => onError(err, item));
      } catch (err) {
        onError(err, item);
      }
    };
    const describe = (item: WatchItem): string => `$KV.${this.bucket}.${item === INITIALIZED ? '' : item.key}`;
    const pending = new DeliveryQueue<WatchItem>(this.limit, run, describe);
    const { initial, stop } = this.store.watch(pattern, (entry) => pending.push(entry));
    for (const entry of initial) pending.push(entry);
    pending.push(INITIALIZED, true);
    return this.owner.track({
      ready,
      unsubscribe: () => {
        stop();
        pending.stop();
        markReady();
      },
    });
  }

  private checkOpen(operation: string): void {
    if (this.owner.isClosed()) throw BusErrors.closed(`kv ${operation} on ${this.bucket}`);
  }
}
