// Configuration history: every epoch's document, author and change summary, kept in KV bucket
// `dbproxy-config-history` (bounded by config_api.history_limit) for listing and rollback.
import { z } from 'zod';
import { defineRecord, openRecords, type Bus, type ConfigRecord, type RecordStore } from '@dbproxy/bus';
import { describeChange } from '@dbproxy/config';

export const HistoryEntry = z.object({
  epoch: z.number().int().positive(),
  config: z.record(z.string(), z.unknown()),
  hash: z.string(),
  author: z.string(),
  appliedAt: z.string(),
  summary: z.string(),
  rollbackOf: z.number().int().positive().optional(),
});
export type HistoryEntry = z.infer<typeof HistoryEntry>;

export const ConfigHistoryRecord = defineRecord('configHistory', 'dbproxy-config-history', 'epoch.{epoch}', 1, HistoryEntry);

export class ConfigHistory {
  private constructor(private readonly store: RecordStore<'epoch.{epoch}', typeof HistoryEntry>) {}

  static async open(bus: Bus): Promise<ConfigHistory> {
    return new ConfigHistory(await openRecords(bus, ConfigHistoryRecord));
  }

  async get(epoch: number): Promise<HistoryEntry | undefined> {
    return (await this.store.get({ epoch: String(epoch) }))?.value;
  }

  /** Epochs held, newest first. */
  async epochs(): Promise<number[]> {
    const keys = await this.store.kv.keys('epoch.*');
    return keys.map((k) => Number(k.slice('epoch.'.length))).filter(Number.isInteger).sort((a, b) => b - a);
  }

  async list(): Promise<HistoryEntry[]> {
    const entries = await Promise.all((await this.epochs()).map((e) => this.get(e)));
    return entries.filter((e): e is HistoryEntry => e !== undefined);
  }

  /** Records `epoch` once (idempotent across config-api replicas) and trims to `limit` entries. */
  async record(epoch: number, record: ConfigRecord, limit: number): Promise<HistoryEntry> {
    const existing = await this.get(epoch);
    if (existing) return existing;
    const previousEpoch = (await this.epochs()).find((e) => e < epoch);
    const previous = previousEpoch === undefined ? undefined : await this.get(previousEpoch);
    const entry: HistoryEntry = {
      epoch,
      config: record.config,
      hash: record.hash,
      author: record.author,
      appliedAt: record.appliedAt,
      summary: record.rollbackOf ? `rollback to epoch ${record.rollbackOf}` : describeChange(previous?.config, record.config),
      ...(record.rollbackOf ? { rollbackOf: record.rollbackOf } : {}),
    };
    try {
      await this.store.put({ epoch: String(epoch) }, entry, { expectedRevision: 0 });
    } catch {
      return (await this.get(epoch)) ?? entry; // another replica recorded it first
    }
    const stale = (await this.epochs()).slice(limit);
    await Promise.all(stale.map((e) => this.store.delete({ epoch: String(e) })));
    return entry;
  }
}
