// The shard of a unit from real SqlRouter decisions: keys, neutral statements, the held shard, users.shards, multi_shard.
import { createShardMap } from '@dbproxy/routing';
import { SqlRouter } from '@dbproxy/sql';
import { routerRulesOf, StatementSharding, type UnitShard } from './statement-sharding';

type Sharding = ConstructorParameters<typeof StatementSharding>[0];
const sharding = (multi: 'reject' | 'all_shards'): Sharding => ({
  enabled: false,
  parameter: 'dbproxy.shard',
  missing: 'refuse',
  default_shard: 's0',
  map: undefined,
  multi_shard: multi,
  rules: [{ table: 'orders', column: 'customer_id', map: { kind: 'hash', shards: ['s0', 's1'] } }],
});
const shardOf = (k: number) => createShardMap({ kind: 'hash', shards: ['s0', 's1'] }).shardFor(k) as string;
const onS1 = [1, 2, 3, 4, 5, 6, 7, 8].find((k) => shardOf(k) === 's1') as number;
const onS0 = [1, 2, 3, 4, 5, 6, 7, 8].find((k) => shardOf(k) === 's0') as number;

function unit(sql: readonly string[], held?: string, multi: 'reject' | 'all_shards' = 'reject', shards: string[] = []): UnitShard {
  const config = sharding(multi);
  const router = new SqlRouter({ dialect: 'postgresql', shardRules: routerRulesOf(config), multiShard: config.multi_shard, cacheSize: 100 });
  return new StatementSharding(config, { name: 'u', shards }).unitShard(sql.map((s) => router.route(s)), held);
}

const reasonOf = (u: UnitShard) => (u.kind === 'refuse' ? u.reason : u.kind);

describe('StatementSharding.unitShard', () => {
  it('sends a keyed statement to its shard, an unsharded table to default_shard, a tableless one with the held connection', () => {
    expect(unit([`SELECT * FROM orders WHERE customer_id = ${onS1}`])).toEqual({ kind: 'one', shard: 's1' });
    expect(unit(['SELECT * FROM settings'])).toEqual({ kind: 'one', shard: 's0' });
    expect(unit(['SELECT 1'], 's1')).toEqual({ kind: 'one', shard: 's1' });
    expect(unit(['COMMIT'], 's1')).toEqual({ kind: 'one', shard: 's1' });
  });

  it('refuses another shard than the held one, and a batch on two shards', () => {
    expect(reasonOf(unit([`SELECT * FROM orders WHERE customer_id = ${onS0}`], 's1'))).toBe('cross_shard_transaction');
    expect(reasonOf(unit([`DELETE FROM orders WHERE customer_id = ${onS0}`, `DELETE FROM orders WHERE customer_id = ${onS1}`]))).toBe('multi_shard');
  });

  it('names the refusal reason of the router', () => {
    expect(reasonOf(unit(['DELETE FROM orders']))).toBe('shard_key_missing');
    expect(reasonOf(unit([`UPDATE orders SET customer_id = 1 WHERE customer_id = ${onS0}`]))).toBe('shard_key_assigned');
    expect(reasonOf(unit([`SELECT * FROM orders WHERE customer_id IN (${onS0}, ${onS1})`]))).toBe('multi_shard');
  });

  it('with all_shards, fans out reads without a merge, never writes or reads inside a transaction', () => {
    expect(unit(['SELECT id FROM orders'], undefined, 'all_shards')).toEqual({ kind: 'fanout', shards: ['s0', 's1'] });
    expect(unit([`SELECT id FROM orders WHERE customer_id IN (${onS0}, ${onS1})`], undefined, 'all_shards')).toMatchObject({ kind: 'fanout' });
    expect(reasonOf(unit(['SELECT id FROM orders ORDER BY id'], undefined, 'all_shards'))).toBe('cross_shard_merge');
    expect(reasonOf(unit(['SELECT id FROM orders'], 's0', 'all_shards'))).toBe('multi_shard');
    expect(reasonOf(unit(['UPDATE orders SET note = 1 WHERE customer_id > 0'], undefined, 'all_shards'))).toBe('multi_shard');
    expect(reasonOf(unit(['SELECT o.id FROM orders o JOIN orders p ON p.note = o.note'], undefined, 'all_shards'))).toBe('shard_key_missing');
  });

  it('checks users.shards against the unit shard', () => {
    expect(reasonOf(unit([`SELECT * FROM orders WHERE customer_id = ${onS1}`], undefined, 'reject', ['s0']))).toBe('shard_forbidden');
    expect(unit([`SELECT * FROM orders WHERE customer_id = ${onS0}`], undefined, 'reject', ['s0'])).toEqual({ kind: 'one', shard: 's0' });
    expect(reasonOf(unit(['SELECT id FROM orders'], undefined, 'all_shards', ['s0']))).toBe('shard_forbidden');
  });
});
