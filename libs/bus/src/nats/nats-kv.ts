// KvStore over JetStream KV. The KV revision is the stream sequence, so it increases across
// the whole bucket; binding is redone per connection so a restarted server is picked up.
import type { KV, NatsConnection, NatsError } from 'nats';
import { errorMessage } from '@dbproxy/util';
import { BusErrors } from '../errors';
import { historyOf } from '../kv-options';
import { assertBucket, assertKey, assertKeyPattern } from '../subjects';
import type { KvEntry, KvOptions, KvPutOptions, KvStore, Subscription } from '../types';
import type { NatsConnectionKeeper } from './connection';
import { fromNatsEntry, NatsKvWatch } from './nats-kv-watch';

/** JetStream API error for "wrong last sequence" (a failed compare-and-set). */
const WRONG_LAST_SEQUENCE = 10071;

export class NatsKvStore implements KvStore {
  private readonly history: number;
  private binding: { nc: NatsConnection; kv: Promise<KV> } | undefined;

  constructor(
    readonly bucket: string,
    opts: KvOptions | undefined,
    private readonly keeper: NatsConnectionKeeper,
    private readonly retryWaitMs: number,
    private readonly track: (sub: Subscription) => Subscription,
  ) {
    assertBucket(bucket);
    this.history = historyOf(bucket, opts);
  }

  /** The bucket bound on the current connection; throws when there is none. */
  async open(operation = 'open'): Promise<KV> {
    const nc = this.keeper.current();
    const state = this.keeper.status.value;
    if (state === 'closed') throw BusErrors.closed(`kv ${operation} on ${this.bucket}`);
    if (!nc || state !== 'connected') throw BusErrors.unavailable(`kv ${operation} on ${this.bucket}`);
    if (this.binding?.nc !== nc) this.binding = { nc, kv: nc.jetstream().views.kv(this.bucket, { history: this.history }) };
    const binding = this.binding;
    try {
      return await binding.kv;
    } catch (err) {
      if (this.binding === binding) this.binding = undefined;
      throw BusErrors.kvFailed.withCause(err, operation, this.bucket, errorMessage(err));
    }
  }

  /** Forget the binding, e.g. after the server lost the bucket; the next call re-creates it. */
  invalidate(): void {
    this.binding = undefined;
  }

  async get(key: string): Promise<KvEntry | undefined> {
    assertKey(key);
    const kv = await this.open('get');
    const entry = await this.run('get', () => kv.get(key));
    return entry && entry.operation === 'PUT' ? fromNatsEntry(entry) : undefined;
  }

  async put(key: string, value: Uint8Array, opts?: KvPutOptions): Promise<number> {
    assertKey(key);
    const kv = await this.open('put');
    const expected = opts?.expectedRevision;
    try {
      if (expected === undefined) return await kv.put(key, value);
      if (expected === 0) return await kv.create(key, value);
      return await kv.update(key, value, expected);
    } catch (err) {
      if ((err as NatsError).api_error?.err_code === WRONG_LAST_SEQUENCE) throw BusErrors.kvRevisionMismatch(this.bucket, key, expected ?? 0);
      throw this.failure('put', err);
    }
  }

  async delete(key: string): Promise<void> {
    assertKey(key);
    const kv = await this.open('delete');
    await this.run('delete', () => kv.delete(key));
  }

  async keys(pattern = '>'): Promise<string[]> {
    assertKeyPattern(pattern);
    const kv = await this.open('keys');
    return this.run('keys', async () => {
      const keys: string[] = [];
      for await (const key of await kv.keys(pattern)) keys.push(key);
      return keys.sort();
    });
  }

  watch(pattern: string, handler: (entry: KvEntry) => void | Promise<void>): Subscription {
    assertKeyPattern(pattern);
    if (this.keeper.status.value === 'closed') throw BusErrors.closed(`kv watch on ${this.bucket}`);
    return this.track(new NatsKvWatch(this, this.keeper, pattern, handler, this.retryWaitMs));
  }

  private async run<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.failure(operation, err);
    }
  }

  private failure(operation: string, err: unknown): Error {
    if (this.keeper.status.value === 'disconnected') return BusErrors.unavailable.withCause(err, `kv ${operation} on ${this.bucket}`);
    return BusErrors.kvFailed.withCause(err, operation, this.bucket, errorMessage(err));
  }
}
