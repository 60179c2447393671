// The statement corpus: real statements with the classification, route and shard keys each must get.
import type { ShardRule } from '@dbproxy/routing';
import type { Dialect, StatementFamily, TransactionEffect, UnsafeReasonCode } from '../../index';

/** Expected shard decision: `unsharded`, `all` (every shard), shard names, or `reject:<error code>`. */
export type ShardExpectation = 'unsharded' | 'all' | readonly string[] | `reject:${string}`;

export interface CorpusCase {
  readonly dialect: Dialect;
  /** Where the statement comes from: tool, ORM or client. */
  readonly source: string;
  readonly sql: string;
  readonly family: StatementFamily;
  /** `replica` when the statement is replica-safe, else `primary`. */
  readonly route: 'replica' | 'primary';
  readonly shards: ShardExpectation;
  /** Shard keys found, in order (numbers for integers). */
  readonly keys?: readonly (number | string)[];
  /** Reasons that must be among the unsafe reasons. */
  readonly reasons?: readonly UnsafeReasonCode[];
  readonly tx?: TransactionEffect;
  readonly session?: 'none' | 'replay' | 'pin';
  /** Tables touched, `schema.name` or `name`, in any order. */
  readonly tables?: readonly string[];
  /** Parameters for placeholders, when the statement has any. */
  readonly params?: readonly (number | string | null)[];
}

type Extra = Partial<Pick<CorpusCase, 'keys' | 'reasons' | 'tx' | 'session' | 'tables' | 'params'>>;

/** A builder of cases for one dialect and source. */
export function cases(dialect: Dialect, source: string) {
  const list: CorpusCase[] = [];
  const add = (sql: string, family: StatementFamily, route: 'replica' | 'primary', shards: ShardExpectation, extra: Extra = {}): void => {
    list.push({ dialect, source, sql, family, route, shards, ...extra });
  };
  return { add, list };
}

const FOUR = ['s0', 's1', 's2', 's3'];

/** Shard rules the MySQL corpus runs under: integer keys hash modulo 4, so id 5 is on s1. */
export const MYSQL_RULES: ShardRule[] = [
  { table: 'sbtest1', column: 'id', map: { kind: 'hash', shards: FOUR } },
  { table: 'users', column: 'id', map: { kind: 'hash', shards: FOUR } },
  { table: 'orders', column: 'user_id', map: { kind: 'hash', shards: FOUR } },
  { table: 'shop.accounts', column: 'region', map: { kind: 'value', values: { eu: 's0', us: 's1', apac: 's2' } } },
  {
    table: 'devices',
    column: 'device_id',
    map: { kind: 'range', ranges: [{ to: 0n, shard: 's0' }, { from: 0n, to: 1000n, shard: 's1' }, { from: 1000n, shard: 's2' }] },
  },
];

/** Shard rules of the PostgreSQL corpus: pgbench accounts by aid range, "User" by id hash over two shards. */
export const POSTGRES_RULES: ShardRule[] = [
  { table: 'pgbench_accounts', column: 'aid', map: { kind: 'range', ranges: [{ to: 50001n, shard: 'pa' }, { from: 50001n, shard: 'pb' }] } },
  { table: 'User', column: 'id', map: { kind: 'hash', shards: ['p0', 'p1'] } },
  { table: 'public.orders', column: 'customer_id', map: { kind: 'hash', shards: ['p0', 'p1'] } },
];
