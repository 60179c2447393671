// SQL as ORMs generate it: Sequelize, TypeORM, Prisma, Hibernate, Django and Rails (ActiveRecord).
import { cases } from './types';

const seq = cases('mysql', 'Sequelize');
seq.add('SELECT `id`, `name`, `email`, `createdAt`, `updatedAt` FROM `users` AS `User` WHERE `User`.`id` = 1;', 'read', 'replica', ['s1'], { keys: [1], tables: ['users'] });
seq.add(
  'SELECT `id`, `name`, `email`, `role`, `status`, `lastLoginAt`, `avatarUrl`, `locale`, `createdAt`, `updatedAt` FROM `users` AS `User` WHERE `User`.`id` IN (1, 2, 3);',
  'read',
  'replica',
  ['s1', 's2', 's3'],
  { keys: [1, 2, 3] },
);
seq.add('SELECT `id`, `user_id`, `total` FROM `orders` AS `Order` WHERE `Order`.`user_id` = 10 ORDER BY `Order`.`id` DESC LIMIT 20;', 'read', 'replica', ['s2'], { keys: [10] });
seq.add(
  "INSERT INTO `users` (`id`,`name`,`email`,`createdAt`,`updatedAt`) VALUES (DEFAULT,'Ann','ann@example.com','2024-01-01 00:00:00','2024-01-01 00:00:00');",
  'write',
  'primary',
  'reject:DBP_ERR_SQL_SHARD_KEY_INVALID',
);
seq.add(
  "INSERT INTO `orders` (`id`,`user_id`,`total`,`createdAt`,`updatedAt`) VALUES (DEFAULT,7,19.99,'2024-01-01 10:00:00','2024-01-01 10:00:00');",
  'write',
  'primary',
  ['s3'],
  { keys: [7], tables: ['orders'] },
);
seq.add("UPDATE `users` SET `name`='Bob',`updatedAt`='2024-01-02 00:00:00' WHERE `id` = 5", 'write', 'primary', ['s1'], { keys: [5] });
seq.add('DELETE FROM `orders` WHERE `user_id` = 6 AND `id` = 99', 'write', 'primary', ['s2'], { keys: [6] });
seq.add('SELECT count(*) AS `count` FROM `users` AS `User`;', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
seq.add(
  'SELECT `User`.`id`, `orders`.`id` AS `orders.id`, `orders`.`total` AS `orders.total` FROM `users` AS `User` LEFT OUTER JOIN `orders` AS `orders` ON `User`.`id` = `orders`.`user_id` WHERE `User`.`id` = 3;',
  'read',
  'replica',
  ['s3'],
  { keys: [3], tables: ['orders', 'users'] },
);
seq.add('START TRANSACTION;', 'transaction', 'primary', 'unsharded', { tx: 'begin' });
seq.add('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;', 'session_state', 'primary', 'unsharded', { session: 'pin' });
seq.add('SELECT 1+1 AS result', 'read', 'replica', 'unsharded');
seq.add("INSERT INTO `users` (`id`,`name`) VALUES (12,'x') ON DUPLICATE KEY UPDATE `name`=VALUES(`name`);", 'write', 'primary', ['s0'], { keys: [12] });
seq.add(
  "INSERT INTO `users` (`id`,`name`) VALUES (12,'x') ON DUPLICATE KEY UPDATE `id`=VALUES(`id`), `name`=VALUES(`name`);",
  'write',
  'primary',
  'reject:DBP_ERR_SQL_SHARD_KEY_ASSIGNED',
);
seq.add('INSERT INTO `orders` (`user_id`,`total`) VALUES (1,10),(2,20),(5,30);', 'write', 'primary', ['s1', 's2'], { keys: [1, 2, 5] });
seq.add('SHOW INDEX FROM `users`', 'utility', 'primary', 'unsharded');
seq.add("SELECT `id` FROM `users` AS `User` WHERE `User`.`email` = 'a@b.c' LIMIT 1;", 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
seq.add('SELECT `id`, `name` FROM `users` AS `User` WHERE (`User`.`id` = 1 OR `User`.`id` = 2);', 'read', 'replica', ['s1', 's2'], { keys: [1, 2] });
seq.add("SELECT `id`, `name` FROM `users` AS `User` WHERE (`User`.`id` = 1 OR `User`.`name` = 'x');", 'read', 'replica', 'all');
seq.add('SELECT `id`, `name` FROM `users` AS `User` WHERE `User`.`id` > 100;', 'read', 'replica', 'all');
seq.add('SELECT `id`, `name` FROM `users` AS `User` WHERE `User`.`id` = ? AND `User`.`deletedAt` IS NULL LIMIT ?;', 'read', 'replica', ['s2'], { keys: [6], params: [6, 1] });

const typeorm = cases('postgresql', 'TypeORM');
typeorm.add(
  'SELECT "User"."id" AS "User_id", "User"."firstName" AS "User_firstName", "User"."lastName" AS "User_lastName", "User"."age" AS "User_age" FROM "User" "User" WHERE "User"."id" IN ($1)',
  'read',
  'replica',
  ['p0'],
  { keys: [4], params: [4], tables: ['User'] },
);
typeorm.add('INSERT INTO "User"("id", "firstName", "lastName") VALUES ($1, $2, $3) RETURNING "id"', 'write', 'primary', ['p1'], { keys: [3], params: [3, 'a', 'b'] });
typeorm.add('UPDATE "User" SET "firstName" = $1 WHERE "id" IN ($2)', 'write', 'primary', ['p1'], { keys: [5], params: ['x', 5] });
typeorm.add('DELETE FROM "User" WHERE "id" = $1', 'write', 'primary', ['p0'], { keys: [8], params: [8] });
typeorm.add('SELECT COUNT(1) AS "cnt" FROM "User" "User"', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
typeorm.add('SELECT * FROM current_schema()', 'read', 'replica', 'unsharded');
typeorm.add(
  'SELECT * FROM "information_schema"."tables" WHERE "table_schema" = \'public\' AND "table_name" = \'migrations\'',
  'read',
  'replica',
  'unsharded',
  { tables: ['information_schema.tables'] },
);
typeorm.add(
  'CREATE TABLE "migrations" ("id" SERIAL NOT NULL, "timestamp" bigint NOT NULL, "name" character varying NOT NULL, CONSTRAINT "PK_8c82d7f526340ab734260ea46be" PRIMARY KEY ("id"))',
  'ddl',
  'primary',
  'unsharded',
);
typeorm.add('SELECT * FROM "migrations" "migrations" ORDER BY "id" DESC', 'read', 'replica', 'unsharded');
typeorm.add('SELECT version()', 'read', 'replica', 'unsharded');
typeorm.add('START TRANSACTION', 'transaction', 'primary', 'unsharded', { tx: 'begin' });
typeorm.add('ROLLBACK', 'transaction', 'primary', 'unsharded', { tx: 'rollback' });
typeorm.add(
  'SELECT "o"."id" AS "o_id", "c"."id" AS "c_id" FROM "public"."orders" "o" INNER JOIN "customers" "c" ON "c"."id"="o"."customer_id" WHERE "o"."customer_id" = $1',
  'read',
  'replica',
  ['p1'],
  { keys: [7], params: [7], tables: ['public.orders', 'customers'] },
);
typeorm.add('SELECT "User"."id" AS "User_id" FROM "User" "User" WHERE "User"."id" = $1 FOR UPDATE', 'read', 'primary', ['p0'], { keys: [2], params: [2], reasons: ['locking_read'] });

const prisma = cases('postgresql', 'Prisma');
prisma.add(
  'SELECT "public"."User"."id", "public"."User"."email", "public"."User"."name" FROM "public"."User" WHERE ("public"."User"."id" = $1 AND 1=1) LIMIT $2 OFFSET $3',
  'read',
  'replica',
  ['p0'],
  { keys: [6], params: [6, 1, 0], tables: ['public.User'] },
);
prisma.add(
  'INSERT INTO "public"."User" ("email","name","id") VALUES ($1,$2,$3) RETURNING "public"."User"."id", "public"."User"."email"',
  'write',
  'primary',
  ['p1'],
  { keys: [9], params: ['a@b.c', 'n', 9] },
);
prisma.add('UPDATE "public"."User" SET "name" = $1 WHERE ("public"."User"."id" = $2 AND 1=1)', 'write', 'primary', ['p0'], { keys: [2], params: ['x', 2] });
prisma.add('DELETE FROM "public"."User" WHERE ("public"."User"."id" = $1 AND 1=1)', 'write', 'primary', ['p1'], { keys: [3], params: [3] });
prisma.add('SELECT "public"."User"."id" FROM "public"."User" WHERE "public"."User"."id" IN ($1,$2,$3) OFFSET $4', 'read', 'replica', ['p1', 'p0'], { keys: [1, 2, 3], params: [1, 2, 3, 0] });
prisma.add(
  'SELECT COUNT(*) FROM (SELECT "public"."User"."id" FROM "public"."User" WHERE 1=1 OFFSET $1) AS "sub"',
  'read',
  'replica',
  'reject:DBP_ERR_SQL_SHARD_KEY_MISSING',
  { params: [0] },
);
prisma.add('BEGIN', 'transaction', 'primary', 'unsharded', { tx: 'begin' });
prisma.add('COMMIT', 'transaction', 'primary', 'unsharded', { tx: 'commit' });
prisma.add('SELECT 1', 'read', 'replica', 'unsharded');
prisma.add('SELECT "public"."Post"."id", "public"."Post"."title" FROM "public"."Post" WHERE "public"."Post"."authorId" IN ($1,$2) OFFSET $3', 'read', 'replica', 'unsharded', { params: [1, 2, 0] });
prisma.add('SELECT EXISTS(SELECT 1 FROM pg_namespace WHERE nspname = $1)', 'read', 'replica', 'unsharded', { params: ['public'] });

const hibernate = cases('mysql', 'Hibernate');
hibernate.add(
  'select user0_.id as id1_0_0_, user0_.email as email2_0_0_, user0_.name as name3_0_0_ from users user0_ where user0_.id=?',
  'read',
  'replica',
  ['s2'],
  { keys: [10], params: [10], tables: ['users'] },
);
hibernate.add('insert into orders (total, user_id, id) values (?, ?, ?)', 'write', 'primary', ['s2'], { keys: [6], params: [12.5, 6, 100] });
hibernate.add('update users set email=?, name=? where id=?', 'write', 'primary', ['s3'], { keys: [11], params: ['a', 'b', 11] });
hibernate.add('delete from orders where id=? and user_id=?', 'write', 'primary', ['s1'], { keys: [13], params: [1, 13] });
hibernate.add('select next_val as id_val from hibernate_sequence for update', 'read', 'primary', 'unsharded', { reasons: ['locking_read'] });
hibernate.add('update hibernate_sequence set next_val= ? where next_val=?', 'write', 'primary', 'unsharded', { params: [2, 1] });
hibernate.add('select orders0_.user_id as user_id3_1_0_, orders0_.id as id1_1_0_ from orders orders0_ where orders0_.user_id=?', 'read', 'replica', ['s0'], { keys: [4], params: [4] });
hibernate.add('select count(*) as col_0_0_ from users user0_', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
hibernate.add('select user0_.id as id1_0_ from users user0_ where user0_.id=? for update', 'read', 'primary', ['s1'], { keys: [1], params: [1] });
hibernate.add('select user0_.id as id1_0_ from users user0_ where user0_.id in (? , ?) limit ?', 'read', 'replica', ['s1', 's2'], { keys: [1, 2], params: [1, 2, 10] });
hibernate.add('SET autocommit=0', 'transaction', 'primary', 'unsharded', { tx: 'autocommit_off' });
hibernate.add('SET autocommit=1', 'transaction', 'primary', 'unsharded', { tx: 'autocommit_on' });
hibernate.add('SET SQL_SELECT_LIMIT=DEFAULT', 'session_state', 'primary', 'unsharded', { session: 'pin' });
hibernate.add(
  '/* mysql-connector-java-8.0.28 (Revision: 7ff2161da3899f379fb3171b6538b191b1c5c7e2) */SELECT  @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, @@character_set_results AS character_set_results, @@collation_server AS collation_server, @@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license AS license, @@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS max_allowed_packet, @@net_write_timeout AS net_write_timeout, @@performance_schema AS performance_schema, @@sql_mode AS sql_mode, @@system_time_zone AS system_time_zone, @@time_zone AS time_zone, @@transaction_isolation AS transaction_isolation, @@wait_timeout AS wait_timeout',
  'read',
  'replica',
  'unsharded',
);
hibernate.add('SELECT @@session.transaction_read_only', 'read', 'replica', 'unsharded');
hibernate.add('SHOW WARNINGS', 'utility', 'primary', 'unsharded');

const django = cases('postgresql', 'Django');
django.add(
  'SELECT "auth_user"."id", "auth_user"."password", "auth_user"."last_login", "auth_user"."is_superuser", "auth_user"."username" FROM "auth_user" WHERE "auth_user"."username" = \'admin\' LIMIT 21',
  'read',
  'replica',
  'unsharded',
  { tables: ['auth_user'] },
);
django.add(
  'INSERT INTO "django_session" ("session_key", "session_data", "expire_date") VALUES (\'abc\', \'data\', \'2024-01-15T10:00:00+00:00\'::timestamptz)',
  'write',
  'primary',
  'unsharded',
);
django.add('UPDATE "auth_user" SET "last_login" = \'2024-01-01T10:00:00+00:00\'::timestamptz WHERE "auth_user"."id" = 1', 'write', 'primary', 'unsharded');
django.add('SELECT (1) AS "a" FROM "django_session" WHERE "django_session"."session_key" = \'abc\' LIMIT 1', 'read', 'replica', 'unsharded');
django.add('SAVEPOINT "s140230_x1"', 'transaction', 'primary', 'unsharded', { tx: 'savepoint' });
django.add('RELEASE SAVEPOINT "s140230_x1"', 'transaction', 'primary', 'unsharded', { tx: 'release_savepoint' });
django.add('ROLLBACK TO SAVEPOINT "s140230_x1"', 'transaction', 'primary', 'unsharded', { tx: 'rollback_to_savepoint' });
django.add('SELECT "django_migrations"."id", "django_migrations"."app", "django_migrations"."name" FROM "django_migrations"', 'read', 'replica', 'unsharded');
django.add("SET TIME ZONE 'UTC'", 'session_state', 'primary', 'unsharded', { session: 'pin' });
django.add('SELECT "orders"."id", "orders"."customer_id" FROM "orders" WHERE "orders"."customer_id" = 4', 'read', 'replica', ['p0'], { keys: [4], tables: ['orders'] });
django.add('DELETE FROM "orders" WHERE "orders"."id" IN (1, 2)', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
django.add('SELECT "orders"."id" FROM "orders" WHERE "orders"."customer_id" = 3 FOR UPDATE', 'read', 'primary', ['p1'], { keys: [3] });
django.add('SELECT "orders"."id" FROM "orders" WHERE "orders"."customer_id" = 3 FOR UPDATE SKIP LOCKED', 'read', 'primary', ['p1'], { keys: [3] });
django.add('SELECT "orders"."id" FROM "orders" WHERE "orders"."customer_id" = 3 FOR NO KEY UPDATE', 'read', 'primary', ['p1']);
django.add('SELECT "auth_user"."id" FROM "auth_user" WHERE "auth_user"."id" = 1 FOR UPDATE OF "auth_user"', 'read', 'primary', 'unsharded', { reasons: ['locking_read'] });
django.add('SELECT "app_order"."id" FROM "app_order" WHERE "app_order"."customer_id" IN (1, 2, 3) ORDER BY "app_order"."id" DESC', 'read', 'replica', 'unsharded');

const rails = cases('mysql', 'Rails');
rails.add('SELECT `users`.* FROM `users` WHERE `users`.`id` = 1 LIMIT 1', 'read', 'replica', ['s1'], { keys: [1] });
rails.add('SELECT `orders`.* FROM `orders` WHERE `orders`.`user_id` = 5', 'read', 'replica', ['s1'], { keys: [5] });
rails.add(
  "INSERT INTO `users` (`id`, `name`, `created_at`, `updated_at`) VALUES (21, 'x', '2024-01-01 00:00:00', '2024-01-01 00:00:00')",
  'write',
  'primary',
  ['s1'],
  { keys: [21] },
);
rails.add("UPDATE `users` SET `users`.`name` = 'y', `users`.`updated_at` = '2024-01-02 00:00:00' WHERE `users`.`id` = 21", 'write', 'primary', ['s1'], { keys: [21] });
rails.add('DELETE FROM `orders` WHERE `orders`.`user_id` = 21', 'write', 'primary', ['s1'], { keys: [21] });
rails.add('SELECT 1 AS one FROM `users` WHERE `users`.`id` = 2 LIMIT 1', 'read', 'replica', ['s2'], { keys: [2] });
rails.add('SELECT `schema_migrations`.`version` FROM `schema_migrations` ORDER BY `schema_migrations`.`version` ASC', 'read', 'replica', 'unsharded');
rails.add("SELECT `ar_internal_metadata`.* FROM `ar_internal_metadata` WHERE `ar_internal_metadata`.`key` = 'environment' LIMIT 1", 'read', 'replica', 'unsharded');
rails.add('SELECT `orders`.* FROM `orders` WHERE `orders`.`user_id` IN (1, 2, 3)', 'read', 'replica', ['s1', 's2', 's3'], { keys: [1, 2, 3] });
rails.add('SELECT COUNT(*) FROM `users` WHERE `users`.`id` IN (4, 8)', 'read', 'replica', ['s0'], { keys: [4, 8] });
rails.add(
  "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci,  @@SESSION.sql_mode = CONCAT(CONCAT(@@sql_mode, ',STRICT_ALL_TABLES'), ',NO_AUTO_VALUE_ON_ZERO'),  @@SESSION.sql_auto_is_null = 0, @@SESSION.wait_timeout = 2147483",
  'session_state',
  'primary',
  'unsharded',
  { session: 'pin' },
);
rails.add('SHOW FULL FIELDS FROM `users`', 'utility', 'primary', 'unsharded');
rails.add('SELECT `users`.* FROM `users` WHERE `users`.`id` = 1 LIMIT 1 FOR UPDATE', 'read', 'primary', ['s1'], { keys: [1] });

export const ORM = [...seq.list, ...typeorm.list, ...prisma.list, ...hibernate.list, ...django.list, ...rails.list];
