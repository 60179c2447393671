// Which SELECTs the result cache looks up and which statements bump which cached tables, on the
// classifications @dbproxy/sql gives real statements; and the sequence renumbering of a replay.
import { SqlRouter } from '@dbproxy/sql';
import { readTables, writtenTables } from './cache-eligibility';
import { isWholePackets, withSequence } from './reply-sequence';

const router = new SqlRouter({ dialect: 'mysql', shardRules: [], multiShard: 'reject', cacheSize: 64 });
const scope = { tables: new Set(['shop.items', 'shop.prices']) };
const reads = (sql: string, schema: string | null = 'shop') => readTables(router.route(sql), schema, scope);
const writes = (sql: string, schema: string | null = 'shop') => writtenTables(router.route(sql).classification, schema, scope).sort();

describe('readTables', () => {
  it('gives the generation keys of a cacheable SELECT, sorted and once each', () => {
    expect(reads('SELECT * FROM items WHERE id = 1')).toEqual(['shop.items']);
    expect(reads('SELECT i.id FROM shop.prices p JOIN Items i ON i.id = p.id JOIN items j ON j.id = i.id')).toEqual(['shop.items', 'shop.prices']);
  });

  it.each([
    ['SELECT NOW(), id FROM items', 'nondeterministic'],
    ['SELECT id FROM items WHERE t > CURRENT_TIMESTAMP', 'nondeterministic'],
    ['SELECT RAND() FROM items', 'nondeterministic'],
    ['SELECT @v, id FROM items', 'nondeterministic'],
    ['SELECT @@hostname, id FROM items', 'nondeterministic'],
    ['SELECT LAST_INSERT_ID() FROM items', 'nondeterministic'],
    ['SELECT id FROM items FOR UPDATE', 'not_cacheable'],
    ['SELECT 1', 'not_cacheable'],
    ['UPDATE items SET v = 1', 'not_cacheable'],
    ['SELECT id FROM orders', 'table_not_cached'],
    ['SELECT i.id FROM items i JOIN orders o ON o.id = i.id', 'table_not_cached'],
  ])('%s is not looked up (%s)', (sql, reason) => {
    expect(reads(sql)).toBe(reason);
  });

  it('needs a database for unqualified tables', () => {
    expect(reads('SELECT id FROM items', null)).toBe('no_database');
    expect(reads('SELECT id FROM shop.items', null)).toEqual(['shop.items']);
  });
});

describe('writtenTables', () => {
  it('names the cached tables a DML or DDL statement writes', () => {
    expect(writes("UPDATE items SET v = 'x' WHERE id = 1")).toEqual(['shop.items']);
    expect(writes('INSERT INTO shop.prices VALUES (1, 2)')).toEqual(['shop.prices']);
    expect(writes('DELETE FROM orders WHERE id = 1')).toEqual([]);
    expect(writes('TRUNCATE TABLE items')).toEqual(['shop.items']);
  });

  it('bumps every cached table when it cannot tell what a statement writes', () => {
    expect(writes('CALL refresh_prices()')).toEqual(['shop.items', 'shop.prices']);
    expect(writes('SELECT my_func(id) FROM orders')).toEqual(['shop.items', 'shop.prices']);
  });

  it('leaves reads, transaction control and settings alone', () => {
    expect(writes('SELECT * FROM items')).toEqual([]);
    expect(writes('COMMIT')).toEqual([]);
    expect(writes('SET NAMES utf8mb4')).toEqual([]);
  });
});

describe('withSequence', () => {
  const packet = (seq: number, body: string) => Buffer.concat([Buffer.from([body.length, 0, 0, seq]), Buffer.from(body)]);

  it('renumbers every packet from the first id, wrapping at 256', () => {
    const stored = Buffer.concat([packet(1, 'ab'), packet(2, ''), packet(3, 'xyz')]);
    const replay = withSequence(stored, 255);
    expect([replay[3], replay[4 + 2 + 3], replay[4 + 2 + 4 + 3]]).toEqual([255, 0, 1]);
    expect(replay.subarray(4, 6).toString()).toBe('ab');
    expect(stored[3]).toBe(1); // the stored bytes are not changed
  });

  it('accepts whole packets only', () => {
    expect(isWholePackets(Buffer.concat([packet(1, 'ab'), packet(2, 'c')]))).toBe(true);
    expect(isWholePackets(packet(1, 'abc').subarray(0, 5))).toBe(false);
    expect(isWholePackets(Buffer.alloc(0))).toBe(false);
  });
});
