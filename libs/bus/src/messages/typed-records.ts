// Typed KV records (KvRecords in the catalogue): values encoded and validated like messages.
import type { z } from 'zod';
import { reportDropped } from '../diagnostics';
import type { Bus, KvPutOptions, KvStore, Subscription } from '../types';
import { decodeMessage, encodeMessage } from './codec';
import type { RecordSpec, TemplateParams } from './spec';

export interface TypedRecord<T extends string, V> {
  readonly key: string;
  readonly params: TemplateParams<T>;
  /** Per-bucket revision; for KvRecords.config it is the configuration epoch. */
  readonly revision: number;
  /** Undefined when this revision deleted the key. */
  readonly value: V | undefined;
  readonly created: Date;
}

export interface RecordStore<T extends string, S extends z.ZodTypeAny> {
  readonly spec: RecordSpec<T, S>;
  readonly kv: KvStore;
  /** The live record; undefined when absent, deleted, or malformed (then reported). */
  get(params: TemplateParams<T>): Promise<TypedRecord<T, z.output<S>> | undefined>;
  put(params: TemplateParams<T>, value: z.input<S>, opts?: KvPutOptions): Promise<number>;
  delete(params: TemplateParams<T>): Promise<void>;
  /** Current records then changes; omitted parameters match every key. Malformed values are reported and skipped. */
  watch(params: Partial<TemplateParams<T>>, handler: (record: TypedRecord<T, z.output<S>>) => void | Promise<void>): Subscription;
}

export async function openRecords<T extends string, S extends z.ZodTypeAny>(bus: Bus, spec: RecordSpec<T, S>): Promise<RecordStore<T, S>> {
  const kv = await bus.kv(spec.bucket, { history: spec.history });
  const where = (key: string): string => `$KV.${spec.bucket}.${key}`;

  const toRecord = (key: string, revision: number, created: Date, value: Uint8Array | undefined): TypedRecord<T, z.output<S>> | undefined => {
    const params = spec.key.parse(key);
    if (!params) return undefined; // another key in the same bucket, not this record type
    if (value === undefined) return { key, params, revision, created, value: undefined };
    const decoded = decodeMessage(spec, value);
    if (!decoded.ok) {
      reportDropped(where(key), decoded.reason, decoded.detail);
      return undefined;
    }
    return { key, params, revision, created, value: decoded.value };
  };

  return {
    spec,
    kv,
    async get(params) {
      const entry = await kv.get(spec.key.fill(params));
      return entry && toRecord(entry.key, entry.revision, entry.created, entry.value);
    },
    put: (params, value, opts) => kv.put(spec.key.fill(params), encodeMessage(spec, value), opts),
    delete: (params) => kv.delete(spec.key.fill(params)),
    watch: (params, handler) =>
      kv.watch(spec.key.pattern(params), (entry) => {
        const record = toRecord(entry.key, entry.revision, entry.created, entry.value);
        return record && handler(record);
      }),
  };
}
