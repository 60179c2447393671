// An in-process KV bucket with JetStream KV semantics: one sequence per bucket as the revision,
// delete markers, compare-and-set on the key's last revision, and watchers.
import { BusErrors } from '../errors';
import { subjectMatches } from '../subjects';
import type { KvEntry } from '../types';

export type EntrySink = (entry: KvEntry) => void;

interface Watcher {
  readonly pattern: string;
  readonly sink: EntrySink;
}

export class EmbeddedBucket {
  private sequence = 0;
  /** The last entry per key, delete markers included (as JetStream keeps them). */
  private readonly latest = new Map<string, KvEntry>();
  private readonly watchers = new Set<Watcher>();

  constructor(
    readonly name: string,
    readonly history: number,
  ) {}

  get(key: string): KvEntry | undefined {
    const entry = this.latest.get(key);
    return entry?.value === undefined ? undefined : entry;
  }

  put(key: string, value: Uint8Array | undefined, expectedRevision: number | undefined): number {
    const last = this.latest.get(key);
    if (expectedRevision !== undefined) {
      const lastRevision = expectedRevision === 0 && last?.value === undefined ? 0 : (last?.revision ?? 0);
      if (lastRevision !== expectedRevision) throw BusErrors.kvRevisionMismatch(this.name, key, expectedRevision);
    }
    const entry: KvEntry = { key, revision: ++this.sequence, value: value && Uint8Array.from(value), created: new Date() };
    this.latest.set(key, entry);
    for (const watcher of this.watchers) {
      if (subjectMatches(watcher.pattern, key)) watcher.sink(entry);
    }
    return entry.revision;
  }

  keys(pattern: string): string[] {
    const keys: string[] = [];
    for (const [key, entry] of this.latest) {
      if (entry.value !== undefined && subjectMatches(pattern, key)) keys.push(key);
    }
    return keys.sort();
  }

  /** Registers a watcher and returns the current entries it should see first, in revision order. */
  watch(pattern: string, sink: EntrySink): { initial: KvEntry[]; stop: () => void } {
    const watcher: Watcher = { pattern, sink };
    this.watchers.add(watcher);
    const initial = [...this.latest.values()].filter((e) => subjectMatches(pattern, e.key)).sort((a, b) => a.revision - b.revision);
    return { initial, stop: () => this.watchers.delete(watcher) };
  }
}
