// Shard targets of real statements through libs/sql's router: one shard by key, the default shard,
// every shard for concatenable keyless reads, and each refusal with the table and reason it names.
import { SqlRouter } from '@dbproxy/sql';
import { refusalReason, shardTarget } from './shard-target';
import type { ShardSettings } from './shard-settings';

const rules = [
  { table: 'orders', column: 'customer_id', map: { kind: 'hash' as const, shards: ['s0', 's1'] } },
  { table: 'users', column: 'id', map: { kind: 'hash' as const, shards: ['s0', 's1'] } },
];

function settings(multiShard: 'all_shards' | 'reject'): ShardSettings {
  return { active: true, rules, allShards: ['s0', 's1'], multiShard, tables: new Set(['orders', 'users']), userShards: new Map() };
}

function target(sql: string, multiShard: 'all_shards' | 'reject' = 'all_shards') {
  const router = new SqlRouter({ dialect: 'mysql', shardRules: rules, multiShard, cacheSize: 64 });
  return shardTarget(router.route(sql), 's0', settings(multiShard));
}

const refusal = (sql: string, multiShard: 'all_shards' | 'reject' = 'all_shards') => {
  const t = target(sql, multiShard);
  if (t.kind !== 'refused') throw new Error(`not refused: ${sql}`);
  return { code: t.error.code, message: t.error.message, reason: refusalReason(t.error.code) };
};

describe('shardTarget', () => {
  it('routes by key, IN lists on one shard, and unsharded statements to the default shard', () => {
    expect(target('SELECT * FROM orders WHERE customer_id = 3')).toEqual({ kind: 'one', shard: 's1', follows: false });
    expect(target('SELECT * FROM orders WHERE customer_id IN (1, 3, 5)')).toEqual({ kind: 'one', shard: 's1', follows: false });
    expect(target('SELECT * FROM items WHERE id = 3')).toEqual({ kind: 'one', shard: 's0', follows: true });
  });

  it('runs concatenable keyless reads on every shard only with all_shards', () => {
    expect(target("SELECT id FROM orders WHERE note = 'x'")).toEqual({ kind: 'all', shards: ['s0', 's1'] });
    expect(target('SELECT id FROM orders WHERE customer_id > 3')).toEqual({ kind: 'all', shards: ['s0', 's1'] });
    expect(refusal("SELECT id FROM orders WHERE note = 'x'", 'reject')).toMatchObject({ code: 'DBP_ERR_SQL_SHARD_KEY_MISSING', reason: 'no_key' });
    expect(refusal("DELETE FROM orders WHERE note = 'x'")).toMatchObject({ code: 'DBP_ERR_SQL_SHARD_KEY_MISSING', reason: 'no_key' });
  });

  it('refuses what a concatenation cannot answer, naming it', () => {
    for (const [sql, what] of [
      ['SELECT id FROM orders ORDER BY id', 'ORDER BY'],
      ['SELECT id FROM orders LIMIT 3', 'LIMIT'],
      ['SELECT SUM(id) FROM orders', 'an aggregate'],
      ['SELECT note, id FROM orders GROUP BY note, id', 'GROUP BY'],
      ['SELECT DISTINCT note FROM orders', 'DISTINCT'],
    ]) {
      expect(refusal(sql as string)).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_SHARD_MERGE', reason: 'merge', message: expect.stringContaining(`cannot merge ${what}`) });
    }
  });

  it('refuses keys on several shards, key assignments and joins not on one shard', () => {
    expect(refusal('DELETE FROM orders WHERE customer_id IN (1, 2)')).toMatchObject({ reason: 'several_shards', message: expect.stringContaining('orders has keys on several shards (s1, s0)') });
    expect(refusal('UPDATE orders SET customer_id = 4 WHERE customer_id = 2')).toMatchObject({ reason: 'key_assigned' });
    expect(refusal('SELECT * FROM orders o JOIN users u ON u.name = o.note WHERE o.customer_id = 1')).toMatchObject({
      reason: 'join',
      message: expect.stringContaining('orders, users'),
    });
    expect(refusal('SELECT * FROM orders o, users u WHERE o.customer_id = 1 AND u.id = 2')).toMatchObject({ reason: 'join' });
    // joined on the keys with one key value: one shard
    expect(target('SELECT * FROM orders o JOIN users u ON u.id = o.customer_id WHERE o.customer_id = 3')).toEqual({ kind: 'one', shard: 's1', follows: false });
  });
});
