// Where a statement goes with respect to shards: nowhere in particular, a set of shards, every shard, or refused.
import type { ShardKey } from '@dbproxy/routing';
import type { DbproxyError } from '@dbproxy/util';

/** Rows of a multi-row INSERT that belong to one shard. */
export interface InsertRowGroup {
  readonly shard: string;
  /** Row indexes (0-based, in statement order). */
  readonly rows: readonly number[];
  /** Source offsets [start, end) of each row's `( ... )` in the statement text, for splitting it. */
  readonly spans: readonly (readonly [number, number])[];
}

export type RoutingDecision =
  /** No shard rule applies: the default shard, or the shard the session is pinned to. */
  | { readonly kind: 'unsharded' }
  /** The statement's keys live on these shards (one shard in the common case). */
  | {
      readonly kind: 'shards';
      readonly shards: readonly string[];
      readonly keys: readonly ShardKey[];
      readonly via: 'key' | 'hint';
      /** For INSERT: its rows grouped per shard. */
      readonly rows?: readonly InsertRowGroup[];
    }
  /** The keys cannot be pinned to a finite set (OR, range) and multi_shard = all_shards. */
  | { readonly kind: 'all_shards'; readonly shards: readonly string[]; readonly reason: string }
  /** Refused, with an error the client can act on. */
  | { readonly kind: 'reject'; readonly error: DbproxyError };

export const UNSHARDED: RoutingDecision = Object.freeze({ kind: 'unsharded' });
