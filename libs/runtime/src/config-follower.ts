// Follows the configuration in KV `dbproxy-config`/`current` (revision = epoch): seeds it from
// the --config file when empty, validates each new revision, and keeps the last good one.
import { createHash } from 'node:crypto';
import { identitiesOf, KvRecords, openRecords, type Bus, type ConfigRecord, type RecordStore, type Subscription } from '@dbproxy/bus';
import { createSnapshot, formatIssue, validateDocument, type ConfigSnapshot, type Environment, type RawDocument } from '@dbproxy/config';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import type { Counter, Gauge } from 'prom-client';
import { errorMessage } from '@dbproxy/util';
import type { Readiness } from './readiness';

export type ConfigListener = (next: ConfigSnapshot, previous: ConfigSnapshot) => void;

/** What services read: the configuration in force and its changes. */
export interface ConfigSource {
  current(): ConfigSnapshot;
  /** Calls `listener` for every newly applied epoch; returns an unsubscribe. */
  onChange(listener: ConfigListener): () => void;
}

/** Canonical hash of a document: identical configurations hash the same. */
export function documentHash(document: unknown): string {
  const canonical = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(canonical);
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(Object.keys(node).sort().map((k) => [k, canonical((node as Record<string, unknown>)[k])]));
    }
    return node;
  };
  return createHash('sha256').update(JSON.stringify(canonical(document))).digest('hex');
}

export interface FollowOptions {
  readonly author: string;
  /** How long start-up waits for the KV's value before serving on the file's configuration. */
  readonly firstValueTimeoutMs: number;
}

type ConfigStore = RecordStore<string, typeof KvRecords.config.schema>;

export class ConfigFollower implements ConfigSource {
  private snapshot: ConfigSnapshot;
  private readonly listeners = new Set<ConfigListener>();
  private watch: Subscription | undefined;
  private readonly rejected: Counter;
  private readonly epochGauge: Gauge;

  constructor(
    initial: ConfigSnapshot,
    private readonly env: Environment,
    private readonly logger: Logger,
    private readonly readiness: Readiness,
    metrics: MetricsRegistry,
  ) {
    this.snapshot = initial;
    // both series exist from start: a rejection shows as an increase, not as a new series
    this.rejected = metrics.counter({ name: 'dbproxy_config_rejected_total', help: 'Configuration epochs this process could not apply' });
    this.rejected.inc(0);
    this.epochGauge = metrics.gauge({ name: 'dbproxy_config_epoch', help: 'Configuration epoch in force (0: the file, before the bus delivered one)' });
    this.epochGauge.set(initial.epoch);
  }

  current(): ConfigSnapshot {
    return this.snapshot;
  }

  onChange(listener: ConfigListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts following; resolves once the KV value is applied or the timeout passed (fail static). */
  async follow(bus: Bus, opts: FollowOptions): Promise<void> {
    const store = await openRecords(bus, KvRecords.config);
    this.watch = store.watch({}, (record) => {
      if (record.value) this.apply(record.revision, record.value);
    });
    // With sender identity on, only a process holding config-api's key may write an epoch.
    const canSeed = identitiesOf(bus)?.canSign(KvRecords.config.signed?.service ?? '') ?? true;
    const seeded = this.watch.ready.then(() => (canSeed ? this.seedIfEmpty(store, opts.author) : undefined));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), opts.firstValueTimeoutMs)));
    const outcome = await Promise.race([seeded.then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.logger.warn({ epoch: this.snapshot.epoch }, 'configuration KV not reachable yet; serving the --config file until it is');
  }

  stop(): void {
    this.watch?.unsubscribe();
  }

  private async seedIfEmpty(store: ConfigStore, author: string): Promise<void> {
    if (this.snapshot.epoch > 0) return;
    const document = this.snapshot.document as RawDocument;
    const record: ConfigRecord = { config: document, hash: documentHash(document), author, appliedAt: new Date().toISOString(), comment: 'seeded from --config' };
    try {
      const revision = await store.put({}, record, { expectedRevision: 0 });
      this.apply(revision, record);
      this.logger.info({ epoch: revision }, 'configuration KV was empty: seeded it from --config');
    } catch (err) {
      // Another instance seeded first (revision mismatch): its value arrives through the watch.
      this.logger.debug({ err: errorMessage(err) }, 'configuration seed not written');
      const existing = await store.get({}).catch(() => undefined);
      if (existing?.value) this.apply(existing.revision, existing.value);
    }
  }

  private apply(epoch: number, record: ConfigRecord): void {
    if (epoch <= this.snapshot.epoch) return;
    const result = validateDocument(record.config, this.env);
    if (!result.ok) {
      const issues = result.issues.map(formatIssue);
      this.rejected.inc();
      this.readiness.set('config', 'degraded', `epoch ${epoch} rejected here: ${issues.slice(0, 3).join('; ')}`);
      this.logger.error({ epoch, issues }, 'configuration epoch rejected; keeping the last good one');
      return;
    }
    const previous = this.snapshot;
    this.snapshot = createSnapshot(epoch, result.config, record.config as RawDocument);
    this.readiness.set('config', 'ready');
    this.epochGauge.set(epoch);
    this.logger.info({ epoch, author: record.author }, 'configuration epoch applied');
    for (const listener of this.listeners) {
      try {
        listener(this.snapshot, previous);
      } catch (err) {
        this.logger.error({ err: errorMessage(err), epoch }, 'configuration listener failed');
      }
    }
  }
}
