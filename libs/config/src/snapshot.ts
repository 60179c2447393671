// Immutable runtime snapshots: one validated configuration and the epoch it belongs to.
import type { RawDocument } from './load';
import type { DbproxyConfig } from './schema/root';

export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends bigint | string | number | boolean | undefined | null
    ? T
    : { readonly [K in keyof T]: DeepReadonly<T[K]> };

export interface ConfigSnapshot {
  /** The configuration epoch: the KV revision of `current`, or 0 for a file never published. */
  readonly epoch: number;
  readonly config: DeepReadonly<DbproxyConfig>;
  /** The document as written, placeholders unexpanded (what the KV stores). */
  readonly document: DeepReadonly<RawDocument>;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export function createSnapshot(epoch: number, config: DbproxyConfig, document: RawDocument): ConfigSnapshot {
  return deepFreeze({ epoch, config: structuredClone(config), document: structuredClone(document) }) as ConfigSnapshot;
}
