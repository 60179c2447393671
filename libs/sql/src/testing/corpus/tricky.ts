// Cases that fool naive classifiers: comments and strings hiding keywords, locking variants, CTEs, upserts, odd keys.
import { cases } from './types';

const my = cases('mysql', 'tricky');
my.add('SELECT /* FOR UPDATE */ id FROM users WHERE id = 1', 'read', 'replica', ['s1'], { keys: [1] });
my.add('SELECT id FROM users WHERE id = 1 -- FOR UPDATE', 'read', 'replica', ['s1']);
my.add('SELECT id FROM users WHERE id = 1 # FOR UPDATE', 'read', 'replica', ['s1']);
my.add("SELECT 'FOR UPDATE' AS x FROM users WHERE id = 2", 'read', 'replica', ['s2']);
my.add('SELECT "LOCK IN SHARE MODE" FROM users WHERE id = 3', 'read', 'replica', ['s3']);
my.add("SELECT 'it''s; DELETE FROM users' FROM users WHERE id = 3", 'read', 'replica', ['s3']);
my.add('/*!40101 SELECT * FROM users WHERE id = 1 FOR UPDATE */', 'read', 'primary', ['s1'], { reasons: ['locking_read'] });
my.add('SELECT * FROM users WHERE id = 1 /*!50000 FOR UPDATE */', 'read', 'primary', ['s1'], { reasons: ['locking_read'] });
my.add('SELECT * FROM orders WHERE user_id = 3 FOR UPDATE SKIP LOCKED', 'read', 'primary', ['s3'], { keys: [3] });
my.add('SELECT * FROM orders WHERE user_id = 3 FOR SHARE', 'read', 'primary', ['s3'], { keys: [3] });
my.add('SELECT * FROM orders WHERE user_id = 3 LOCK IN SHARE MODE', 'read', 'primary', ['s3']);
my.add('SELECT * FROM orders WHERE user_id = 3 FOR UPDATE OF orders NOWAIT', 'read', 'primary', ['s3']);
my.add('SELECT * FROM orders WHERE user_id IN (SELECT id FROM users WHERE id = 2 FOR UPDATE)', 'read', 'primary', 'all', { reasons: ['locking_read'] });
my.add('WITH recent AS (SELECT * FROM orders WHERE user_id = 9) SELECT * FROM recent', 'read', 'replica', ['s1'], { keys: [9], tables: ['orders'] });
my.add('WITH RECURSIVE cte (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM cte WHERE n < 5) SELECT * FROM cte', 'read', 'replica', 'unsharded', { tables: [] });
my.add('INSERT INTO orders (user_id, total) SELECT id, 0 FROM users WHERE id = 5', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
my.add('INSERT INTO order_archive SELECT * FROM orders WHERE user_id = 5', 'write', 'primary', ['s1'], { keys: [5], tables: ['order_archive', 'orders'] });
my.add("REPLACE INTO users (id, name) VALUES (3, 'c')", 'write', 'primary', ['s3'], { keys: [3] });
my.add("INSERT INTO users (id, name) VALUES (5, 'e') ON DUPLICATE KEY UPDATE name = 'e'", 'write', 'primary', ['s1'], { keys: [5] });
my.add("INSERT INTO users SET id = 6, name = 'f'", 'write', 'primary', ['s2'], { keys: [6] });
my.add("INSERT INTO users SET name = 'f'", 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add("UPDATE users SET name = 'x' WHERE id = 5 OR id = 9", 'write', 'primary', ['s1'], { keys: [5, 9] });
my.add('UPDATE users SET id = id + 1 WHERE id = 5', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_KEY_ASSIGNED');
my.add('UPDATE orders o JOIN users u ON u.id = o.user_id SET o.total = 0 WHERE u.id = 7', 'write', 'primary', ['s3'], { keys: [7] });
my.add('DELETE FROM users WHERE id IN (SELECT user_id FROM orders WHERE total > 100)', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add('SELECT * FROM users WHERE id = -5', 'read', 'replica', ['s3'], { keys: [-5] });
my.add('SELECT * FROM users WHERE id = - 5', 'read', 'replica', ['s3'], { keys: [-5] });
my.add('SELECT * FROM users WHERE id = 0x10', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_INVALID');
my.add("SELECT * FROM users WHERE id = '7'", 'read', 'replica', ['s3'], { keys: ['7'] });
my.add('SELECT * FROM users WHERE id = 18446744073709551617', 'read', 'replica', ['s1']);
my.add('SELECT * FROM users WHERE id = 5.0', 'read', 'replica', ['s1'], { keys: [5] });
my.add('SELECT * FROM users WHERE id = 5.5', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_INVALID');
my.add('SELECT * FROM users WHERE id = NULL', 'read', 'replica', 'all');
my.add('SELECT * FROM users WHERE id IS NULL', 'read', 'replica', 'all');
my.add('SELECT * FROM users u WHERE u.id = 1 AND u.id = 2', 'read', 'replica', ['s1'], { keys: [1, 2] });
my.add('SELECT * FROM users WHERE NOT (id = 1)', 'read', 'replica', 'all');
my.add('SELECT * FROM users WHERE id <> 1', 'read', 'replica', 'all');
my.add('SELECT * FROM users WHERE id = ? AND name = ?', 'read', 'replica', ['s2'], { keys: [6], params: [6, 'x'] });
my.add('SELECT * FROM users WHERE name = ? AND id = ?', 'read', 'replica', ['s2'], { keys: [6], params: ['x', 6] });
my.add('SELECT * FROM users WHERE id = ?', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_UNBOUND');
my.add("SELECT * FROM shop.accounts WHERE region = 'eu'", 'read', 'replica', ['s0'], { keys: ['eu'], tables: ['shop.accounts'] });
my.add("SELECT * FROM accounts WHERE region = 'us'", 'read', 'replica', ['s1'], { keys: ['us'] });
my.add("SELECT * FROM other.accounts WHERE region = 'us'", 'read', 'replica', 'unsharded');
my.add("SELECT * FROM accounts WHERE region = 'mars'", 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_UNMAPPED');
my.add("SELECT * FROM accounts WHERE region IN ('eu', 'apac')", 'read', 'replica', ['s0', 's2'], { keys: ['eu', 'apac'] });
my.add('SELECT * FROM devices WHERE device_id = -3', 'read', 'replica', ['s0'], { keys: [-3] });
my.add('SELECT * FROM devices WHERE device_id = 999', 'read', 'replica', ['s1']);
my.add('SELECT * FROM devices WHERE device_id = 1000', 'read', 'replica', ['s2']);
my.add('SELECT * FROM devices WHERE device_id BETWEEN 1 AND 5', 'read', 'replica', 'all');
my.add('SELECT 1; SELECT 2', 'read', 'primary', 'unsharded', { reasons: ['multi_statement'] });
my.add('SELECT * FROM users WHERE id = 1; DELETE FROM users WHERE id = 1', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
my.add('SELECT LAST_INSERT_ID()', 'read', 'primary', 'unsharded', { reasons: ['state_function'] });
my.add('SELECT FOUND_ROWS()', 'read', 'primary', 'unsharded');
my.add('SELECT ROW_COUNT()', 'read', 'primary', 'unsharded');
my.add('SELECT SQL_CALC_FOUND_ROWS * FROM orders WHERE user_id = 1 LIMIT 10', 'read', 'primary', ['s1'], { session: 'pin' });
my.add("SELECT GET_LOCK('job', 10)", 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['lock_function'] });
my.add("SELECT RELEASE_LOCK('job')", 'read', 'primary', 'unsharded', { session: 'pin' });
my.add("SELECT IS_FREE_LOCK('job')", 'read', 'primary', 'unsharded');
my.add("DO GET_LOCK('x', 1)", 'write', 'primary', 'unsharded', { session: 'pin' });
my.add('SELECT @x := 1', 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['user_variable'] });
my.add('SELECT @x', 'read', 'primary', 'unsharded', { session: 'none', reasons: ['user_variable'] });
my.add('SELECT @@identity', 'read', 'primary', 'unsharded', { reasons: ['session_variable'] });
my.add('SELECT id INTO @uid FROM users WHERE id = 1', 'read', 'primary', ['s1'], { session: 'pin', reasons: ['select_into'] });
my.add("SELECT * FROM users WHERE id = 1 INTO OUTFILE '/tmp/users.csv'", 'read', 'primary', ['s1'], { reasons: ['select_into'] });
my.add('CALL refresh_stats(1)', 'write', 'primary', 'unsharded', { reasons: ['procedure_call'] });
my.add('SELECT my_udf(id) FROM users WHERE id = 1', 'read', 'primary', ['s1'], { reasons: ['user_function'] });
my.add('SELECT shop.price_with_tax(total) FROM orders WHERE user_id = 1', 'read', 'primary', ['s1'], { reasons: ['user_function'] });
// Quoted routine names (jOOQ, some ORMs) are calls like unquoted ones; MySQL compares function names case-insensitively.
my.add('SELECT `my_udf`(1)', 'read', 'primary', 'unsharded', { reasons: ['user_function'] });
my.add('SELECT `shop`.`price_with_tax`(`total`) FROM `orders` WHERE `user_id` = 1', 'read', 'primary', ['s1'], { reasons: ['user_function'] });
my.add("SELECT `GET_LOCK`('a', 1)", 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['lock_function'] });
my.add("SELECT `release_lock`('a')", 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['lock_function'] });
my.add('SELECT `LAST_INSERT_ID`()', 'read', 'primary', 'unsharded', { reasons: ['state_function'] });
my.add("SELECT `LOWER`(`name`), `coalesce`(`email`, '') FROM `users` WHERE `id` = 2", 'read', 'replica', ['s2'], { keys: [2] });
my.add('INSERT INTO `orders` (`user_id`, `total`) VALUES (5, 1)', 'write', 'primary', ['s1'], { keys: [5], session: 'none' });
my.add('SELECT * FROM t1 UNION SELECT * FROM users WHERE id = 2', 'read', 'replica', ['s2'], { tables: ['t1', 'users'] });
my.add('SELECT * FROM users WHERE id = 1 UNION ALL SELECT * FROM users WHERE id = 2', 'read', 'replica', ['s1', 's2']);
my.add('SELECT * FROM (SELECT * FROM users WHERE id = 10) AS u', 'read', 'replica', ['s2'], { keys: [10] });
my.add('SELECT * FROM users WHERE EXISTS (SELECT 1 FROM orders o WHERE o.user_id = users.id) AND id = 5', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add('SELECT * FROM users u WHERE u.id = 5 AND EXISTS (SELECT 1 FROM orders o WHERE o.user_id = u.id)', 'read', 'replica', ['s1'], { keys: [5] });
my.add('SELECT (SELECT COUNT(*) FROM orders o WHERE o.user_id = u.id) AS n FROM users u WHERE u.id = 6', 'read', 'replica', ['s2'], { keys: [6] });
my.add('SELECT * FROM users u WHERE u.id = 5 AND EXISTS (SELECT 1 FROM users u WHERE u.name = 1)', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add('SELECT * FROM users JOIN orders USING (id) WHERE users.id = 2', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add('SELECT * FROM users, orders WHERE orders.user_id = users.id AND users.id = 3', 'read', 'replica', ['s3'], { keys: [3] });
my.add("SELECT * FROM users WHERE id = 1 AND name LIKE 'a%'", 'read', 'replica', ['s1']);
my.add('SELECT * FROM users WHERE id = 1 OR id IN (2, 3)', 'read', 'replica', ['s1', 's2', 's3'], { keys: [1, 2, 3] });
my.add('SELECT * FROM users WHERE (id, name) IN ((1, 2))', 'read', 'replica', 'all');
my.add('SELECT * FROM users WHERE id = (SELECT MAX(user_id) FROM orders WHERE user_id = 2)', 'read', 'replica', 'all');
my.add("SELECT * FROM users WHERE id = 3 AND name = _utf8mb4'abc' COLLATE utf8mb4_bin", 'read', 'replica', ['s3']);
my.add('SELECT * FROM users WHERE id <=> 5', 'read', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED', { reasons: ['parse_failed'] });
my.add('SELECT * FROM sbtest2 WHERE id <=> 5', 'read', 'replica', 'unsharded');
my.add('SELECT * FROM users WHERE id IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)', 'read', 'replica', ['s1', 's2', 's3', 's0']);
my.add("INSERT INTO users (id, name) VALUES (1, 'a'), (2, NOW()), (3, 'c')", 'write', 'primary', ['s1', 's2', 's3'], { keys: [1, 2, 3] });
my.add("INSERT INTO users (id, name) VALUES (1, 'a'), (NULL, 'b')", 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_KEY_INVALID');
my.add('SELECT * FROM `users` WHERE `id` = 1 AND `id` IN (1, 5)', 'read', 'replica', ['s1'], { keys: [1, 5] });

const pg = cases('postgresql', 'tricky');
pg.add('WITH moved AS (DELETE FROM "User" WHERE "id" = 4 RETURNING *) INSERT INTO archive SELECT * FROM moved', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED', { reasons: ['parse_failed'] });
pg.add('WITH x AS (UPDATE "User" SET "name" = $1 WHERE "id" = $2 RETURNING *) SELECT * FROM x', 'write', 'primary', ['p1'], { keys: [3], params: ['n', 3], reasons: ['writable_cte'] });
pg.add(
  'INSERT INTO "User" ("id", "email") VALUES (5, \'x\') ON CONFLICT ("id") DO UPDATE SET "email" = EXCLUDED."email" RETURNING "id"',
  'write',
  'primary',
  ['p1'],
  { keys: [5] },
);
pg.add('INSERT INTO "User" ("id", "email") VALUES (5, \'x\') ON CONFLICT ("id") DO UPDATE SET "id" = 6', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_KEY_ASSIGNED');
pg.add('INSERT INTO "User" ("id", "email") VALUES (7, \'x\') ON CONFLICT DO NOTHING', 'write', 'primary', ['p1'], { keys: [7] });
pg.add('SELECT * FROM "User" WHERE "id" = ANY($1)', 'read', 'replica', 'all', { params: ['{1,2}'] });
pg.add('SELECT * FROM "User" WHERE "id" = $1::int', 'read', 'replica', ['p1'], { keys: [3], params: [3] });
pg.add('SELECT * FROM "User" WHERE "id" = CAST($1 AS bigint)', 'read', 'replica', ['p0'], { keys: [2], params: [2] });
pg.add("SELECT * FROM public.orders WHERE customer_id = E'4'", 'read', 'replica', ['p0'], { keys: ['4'] });
pg.add('SELECT * FROM orders WHERE customer_id = $$5$$', 'read', 'replica', ['p1'], { keys: ['5'] });
pg.add('SELECT * FROM orders WHERE customer_id IN (1, 2, 3)', 'read', 'replica', ['p1', 'p0']);
pg.add('DELETE FROM orders USING customers c WHERE orders.customer_id = c.id AND c.id = 5', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
pg.add('UPDATE orders SET total = total * 2 FROM customers c WHERE orders.customer_id = c.id AND c.id = 7', 'write', 'primary', ['p1'], { keys: [7] });
pg.add('SELECT * FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE o.customer_id = 2', 'read', 'replica', ['p0']);
pg.add('SELECT * FROM customers c LEFT JOIN orders o ON o.customer_id = c.id AND o.customer_id = 3', 'read', 'replica', ['p1'], { keys: [3] });
pg.add('SELECT * FROM customers c LEFT JOIN orders o ON o.customer_id = c.id WHERE c.id = 3', 'read', 'replica', ['p1'], { keys: [3] });
pg.add('SELECT * FROM orders o RIGHT JOIN customers c ON c.id = o.customer_id WHERE c.id = 3', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
pg.add('SELECT * FROM orders WHERE customer_id = 1 OR customer_id IN (2, 3)', 'read', 'replica', ['p1', 'p0']);
pg.add('SELECT * FROM "User" WHERE "id" = 1 FOR SHARE', 'read', 'primary', ['p1']);
pg.add('SELECT * FROM "User" WHERE "id" = 1 FOR KEY SHARE NOWAIT', 'read', 'primary', ['p1']);
pg.add('SELECT * FROM "User" u WHERE u."id" = $1 FOR UPDATE OF u SKIP LOCKED', 'read', 'primary', ['p0'], { keys: [10], params: [10] });
pg.add("SELECT nextval('orders_id_seq')", 'read', 'primary', 'unsharded', { reasons: ['sequence_function'] });
pg.add("SELECT currval('orders_id_seq')", 'read', 'primary', 'unsharded');
pg.add('SELECT lastval()', 'read', 'primary', 'unsharded');
pg.add("SELECT setval('orders_id_seq', 10)", 'read', 'primary', 'unsharded');
pg.add('SELECT pg_advisory_lock(42)', 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['lock_function'] });
pg.add('SELECT pg_advisory_xact_lock(42)', 'read', 'primary', 'unsharded', { session: 'none' });
pg.add('SELECT pg_try_advisory_lock(1)', 'read', 'primary', 'unsharded', { session: 'pin' });
pg.add('SELECT txid_current()', 'read', 'primary', 'unsharded', { reasons: ['state_function'] });
pg.add('SELECT pg_current_wal_lsn()', 'read', 'primary', 'unsharded');
pg.add("SELECT pg_notify('jobs', 'x')", 'read', 'primary', 'unsharded', { reasons: ['side_effect_function'] });
pg.add('SELECT * INTO TEMP new_users FROM "User" WHERE "id" = 1', 'ddl', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED', { session: 'pin' });
pg.add("SELECT data->>'name' FROM events WHERE data ? 'name' AND id = $1", 'read', 'replica', 'unsharded', { params: [1] });
pg.add("SELECT * FROM events WHERE payload @> '{\"a\": 1}'::jsonb", 'read', 'replica', 'unsharded');
pg.add("SELECT * FROM orders WHERE created = DATE '2020-01-01' AND customer_id = 5", 'read', 'replica', ['p1'], { keys: [5] });
pg.add("SELECT * FROM orders WHERE data ? 'vip' AND customer_id = 4 AND data ?| array['a'] AND note = $1", 'read', 'replica', ['p0'], { keys: [4], params: ['x'] });
pg.add("SELECT * FROM orders WHERE customer_id = $2 AND data ? $1", 'read', 'replica', ['p1'], { keys: [3], params: ['k', 3] });
pg.add('SELECT 1; SELECT 2;', 'read', 'primary', 'unsharded', { reasons: ['multi_statement'] });
pg.add('SELECT * FROM "User" WHERE "id" IS NOT DISTINCT FROM 5', 'read', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED', { reasons: ['parse_failed'] });
pg.add('SELECT app.compute_score("id") FROM "User" WHERE "id" = 1', 'read', 'primary', ['p1'], { reasons: ['user_function'] });
// Quoted routine names are calls too; PostgreSQL keeps a quoted name's case, so "NEXTVAL" is a user-defined function.
pg.add(`SELECT "nextval"('orders_id_seq')`, 'read', 'primary', 'unsharded', { reasons: ['sequence_function'] });
pg.add(`SELECT "pg_catalog"."setval"('orders_id_seq', 5)`, 'read', 'primary', 'unsharded', { reasons: ['sequence_function'] });
pg.add('SELECT "pg_advisory_lock"(1)', 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['lock_function'] });
pg.add('SELECT "pg_advisory_xact_lock"(1)', 'read', 'primary', 'unsharded', { session: 'none', reasons: ['lock_function'] });
pg.add(`SELECT "set_config"('search_path', 'app', false)`, 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['side_effect_function'] });
pg.add('SELECT "txid_current"()', 'read', 'primary', 'unsharded', { reasons: ['state_function'] });
pg.add('SELECT "my_fn"(1)', 'read', 'primary', 'unsharded', { reasons: ['user_function'] });
pg.add(`SELECT "NEXTVAL"('orders_id_seq')`, 'read', 'primary', 'unsharded', { reasons: ['user_function'] });
pg.add('SELECT "app"."compute_score"("id") FROM "User" WHERE "id" = 1', 'read', 'primary', ['p1'], { reasons: ['user_function'] });
pg.add(`SELECT "lower"("email"), "coalesce"("name", '') FROM "User" WHERE "id" = 1`, 'read', 'replica', ['p1'], { keys: [1] });
pg.add('SELECT * FROM "my_rows"(1)', 'read', 'primary', 'unsharded', { reasons: ['user_function'] });
pg.add('WITH "recent"("id") AS (SELECT "id" FROM "User" WHERE "id" = 1) SELECT * FROM "recent"', 'read', 'replica', ['p1'], { keys: [1] });
pg.add("SELECT * FROM orders WHERE customer_id = 5 AND created_at > now() - interval '1 day'", 'read', 'replica', ['p1']);
pg.add('SELECT /* FOR UPDATE */ * FROM orders /* nested /* comment */ still */ WHERE customer_id = 6', 'read', 'replica', ['p0']);
pg.add(
  "/*traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',dbproxy_route='primary'*/ SELECT * FROM orders WHERE customer_id = 1",
  'read',
  'replica',
  ['p1'],
);

export const TRICKY = [...my.list, ...pg.list];
