// Publishes one protocol's snapshots: on `dbproxy.topology.<protocol>` and into KV
// `dbproxy-topology` for late joiners, with a generation that only grows, even across restarts.
import { publishMessage, Subjects, type Bus, type KvRecords, type Protocol, type RecordStore, type TopologyShard, type TopologySnapshot } from '@dbproxy/bus';

type TopologyStore = RecordStore<string, (typeof KvRecords)['topology']['schema']>;

export type PublishTrigger = 'change' | 'republish' | 'refresh';

export interface PublisherHooks {
  published(snapshot: TopologySnapshot, trigger: PublishTrigger): void;
  kvFailed(err: unknown): void;
}

export class SnapshotPublisher {
  private last: TopologySnapshot | undefined;
  private lastContent = '';
  private generation = 0;
  private kvGeneration = 0;
  private store: TopologyStore | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly protocol: Protocol,
    private readonly hooks: PublisherHooks,
  ) {}

  /** The KV copy goes here once the store is open. */
  attach(store: TopologyStore): void {
    this.store = store;
  }

  /** A generation seen elsewhere (the KV's last snapshot, a client's request): later ones exceed it. */
  observe(generation: number): void {
    this.generation = Math.max(this.generation, generation);
  }

  current(): TopologySnapshot | undefined {
    return this.last;
  }

  /** Publishes when the epoch or shards differ from the last snapshot (or `force`); returns the snapshot in force. */
  offer(epoch: number, shards: TopologyShard[], trigger: PublishTrigger, force = false): TopologySnapshot {
    const content = JSON.stringify([epoch, shards]);
    if (this.last && content === this.lastContent && !force) return this.last;
    // Wall-clock milliseconds keep generations growing across restarts; +1 keeps them strictly increasing.
    this.generation = Math.max(this.generation + 1, Date.now());
    this.last = { protocol: this.protocol, generation: this.generation, epoch, publishedAt: new Date().toISOString(), shards };
    this.lastContent = content;
    this.send(trigger);
    return this.last;
  }

  /** Sends the snapshot in force again (same generation): edges take it as a sign of life. */
  republish(): void {
    if (this.last) this.send('republish');
  }

  private send(trigger: PublishTrigger): void {
    const snapshot = this.last as TopologySnapshot;
    publishMessage(this.bus, Subjects.topology, { protocol: this.protocol }, snapshot);
    this.hooks.published(snapshot, trigger);
    if (this.store && this.kvGeneration < snapshot.generation && this.bus.status() === 'connected') {
      this.store.put({ protocol: this.protocol }, snapshot).then(
        () => (this.kvGeneration = Math.max(this.kvGeneration, snapshot.generation)),
        (err: unknown) => this.hooks.kvFailed(err),
      );
    }
  }
}
