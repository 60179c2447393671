// Typed KV records (KvRecords in the catalogue): values encoded and validated like messages.
import type { z } from 'zod';
import { reportDropped } from '../diagnostics';
import { reportRejected } from '../identity/rejections';
import { sealOutgoing, verifyIncoming } from '../identity/signed-delivery';
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

  const toRecord = (key: string, revision: number, created: Date, value: Uint8Array | undefined, newest?: Map<string, { atMs: number; nonce: string }>): TypedRecord<T, z.output<S>> | undefined => {
    const params = spec.key.parse(key);
    if (!params) return undefined; // another key in the same bucket, not this record type
    if (value === undefined) return { key, params, revision, created, value: undefined };
    const decoded = decodeMessage(spec, value);
    if (!decoded.ok) {
      reportDropped(where(key), decoded.reason, decoded.detail);
      return undefined;
    }
    // A record stays valid until replaced, so no age window; a watch refuses one signed before the one it delivered last (a replayed old value).
    const receipt = verifyIncoming(bus, spec.signed, where(key), where(key), value, { checkAge: false });
    if (!receipt.ok) return undefined;
    const last = newest?.get(key);
    if (spec.signed && last && receipt.atMs !== undefined && receipt.nonce !== undefined) {
      if (receipt.atMs < last.atMs || receipt.nonce === last.nonce) {
        reportRejected({ subject: where(key), kind: spec.signed.kind, reason: 'replayed', detail: `revision ${revision} was signed before the value in force` });
        return undefined;
      }
    }
    if (newest && receipt.atMs !== undefined && receipt.nonce !== undefined) newest.set(key, { atMs: receipt.atMs, nonce: receipt.nonce });
    return { key, params, revision, created, value: decoded.value };
  };

  return {
    spec,
    kv,
    async get(params) {
      const entry = await kv.get(spec.key.fill(params));
      return entry && toRecord(entry.key, entry.revision, entry.created, entry.value);
    },
    put: (params, value, opts) => {
      const key = spec.key.fill(params);
      return kv.put(key, sealOutgoing(bus, spec.signed, where(key), encodeMessage(spec, value), spec.name).data, opts);
    },
    delete: (params) => kv.delete(spec.key.fill(params)),
    watch: (params, handler) => {
      const newest = new Map<string, { atMs: number; nonce: string }>();
      return kv.watch(spec.key.pattern(params), (entry) => {
        const record = toRecord(entry.key, entry.revision, entry.created, entry.value, newest);
        return record && handler(record);
      });
    },
  };
}
