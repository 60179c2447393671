// What GUI and CLI clients send: mysql CLI, MySQL Workbench, DBeaver, phpMyAdmin, psql, pgAdmin.
import { cases } from './types';

const my = cases('mysql', 'GUI clients');
my.add('select @@version_comment limit 1', 'read', 'replica', 'unsharded');
my.add('SELECT DATABASE()', 'read', 'replica', 'unsharded');
my.add('SHOW DATABASES', 'utility', 'primary', 'unsharded');
my.add('SHOW TABLES', 'utility', 'primary', 'unsharded');
my.add('SHOW FULL TABLES FROM `shop`', 'utility', 'primary', 'unsharded');
my.add(
  "SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' ORDER BY TABLE_NAME",
  'read',
  'replica',
  'unsharded',
  { tables: ['information_schema.TABLES'] },
);
my.add(
  "SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE, COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'users' ORDER BY ORDINAL_POSITION",
  'read',
  'replica',
  'unsharded',
);
my.add('SHOW CREATE TABLE `shop`.`users`', 'utility', 'primary', 'unsharded');
my.add("SHOW VARIABLES LIKE 'lower_case_table_names'", 'utility', 'primary', 'unsharded');
my.add('SELECT @@global.max_allowed_packet', 'read', 'replica', 'unsharded');
my.add('SHOW ENGINES', 'utility', 'primary', 'unsharded');
my.add('SHOW CHARSET', 'utility', 'primary', 'unsharded');
my.add('SHOW COLLATION', 'utility', 'primary', 'unsharded');
my.add('SELECT CURRENT_USER()', 'read', 'replica', 'unsharded');
my.add('SELECT * FROM information_schema.SCHEMATA', 'read', 'replica', 'unsharded');
my.add('SELECT * FROM mysql.user ORDER BY user', 'read', 'replica', 'unsharded', { tables: ['mysql.user'] });
my.add("SHOW SESSION STATUS LIKE 'Threads_connected'", 'utility', 'primary', 'unsharded');
my.add('SHOW PROCESSLIST', 'utility', 'primary', 'unsharded');
my.add('SHOW GRANTS FOR CURRENT_USER', 'utility', 'primary', 'unsharded');
my.add('SET SQL_SAFE_UPDATES=1', 'session_state', 'primary', 'unsharded', { session: 'pin' });
my.add('SET @@SESSION.autocommit = 1', 'transaction', 'primary', 'unsharded', { tx: 'autocommit_on' });
my.add("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'shop'", 'read', 'replica', 'unsharded');
my.add('SELECT CONNECTION_ID()', 'read', 'primary', 'unsharded', { reasons: ['state_function'] });
my.add('EXPLAIN SELECT * FROM users WHERE id = 1', 'utility', 'primary', 'unsharded');
my.add('DESCRIBE users', 'utility', 'primary', 'unsharded');
my.add('DESC `orders`', 'utility', 'primary', 'unsharded');
my.add('SHOW INDEX FROM users FROM shop', 'utility', 'primary', 'unsharded');
my.add('SHOW ERRORS', 'utility', 'primary', 'unsharded');
my.add('KILL QUERY 12345', 'utility', 'primary', 'unsharded');
my.add('SHOW MASTER STATUS', 'utility', 'primary', 'unsharded');
my.add(
  "SELECT `SCHEMA_NAME` FROM `INFORMATION_SCHEMA`.`SCHEMATA`, (SELECT DB_first_level FROM ( SELECT DISTINCT SUBSTRING_INDEX(SCHEMA_NAME, '_', 1) DB_first_level FROM INFORMATION_SCHEMA.SCHEMATA WHERE TRUE ) t ORDER BY DB_first_level ASC LIMIT 0, 100) t2 WHERE TRUE AND 1 = LOCATE(CONCAT(DB_first_level, '_'), CONCAT(SCHEMA_NAME, '_')) ORDER BY SCHEMA_NAME ASC",
  'read',
  'replica',
  'unsharded',
);
my.add(
  'SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()',
  'read',
  'replica',
  'unsharded',
);
my.add("SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'shop'", 'read', 'replica', 'unsharded');
my.add('SELECT NOW(), UTC_TIMESTAMP()', 'read', 'replica', 'unsharded');

const pg = cases('postgresql', 'GUI clients');
pg.add(
  `SELECT n.nspname as "Schema", c.relname as "Name", CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type", pg_catalog.pg_get_userbyid(c.relowner) as "Owner" FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog' AND n.nspname !~ '^pg_toast' AND n.nspname <> 'information_schema' AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1,2;`,
  'read',
  'replica',
  'unsharded',
);
pg.add(
  "SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname OPERATOR(pg_catalog.~) '^(users)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 2, 3;",
  'read',
  'replica',
  'unsharded',
);
pg.add('SELECT version()', 'read', 'replica', 'unsharded');
pg.add('SHOW search_path', 'utility', 'primary', 'unsharded');
pg.add('SHOW server_version', 'utility', 'primary', 'unsharded');
pg.add('SELECT current_schema()', 'read', 'replica', 'unsharded');
pg.add('SELECT current_database()', 'read', 'replica', 'unsharded');
pg.add(
  "SELECT db.oid as did, db.datname, db.datallowconn, pg_encoding_to_char(db.encoding) AS serverencoding, has_database_privilege(db.oid, 'CREATE') as cancreate, datistemplate FROM pg_catalog.pg_database db WHERE db.datname = current_database()",
  'read',
  'replica',
  'unsharded',
  { tables: ['pg_catalog.pg_database'] },
);
pg.add('SELECT rolname, rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user', 'read', 'replica', 'unsharded');
pg.add(
  "SET DateStyle=ISO; SET client_min_messages=notice; SELECT set_config('bytea_output','hex',false) FROM pg_show_all_settings() WHERE name = 'bytea_output'; SET client_encoding='UNICODE';",
  'session_state',
  'primary',
  'unsharded',
  { reasons: ['multi_statement'], session: 'pin' },
);
pg.add(
  "SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass ORDER BY nspname",
  'read',
  'replica',
  'unsharded',
);
pg.add('SELECT pg_is_in_recovery()', 'read', 'primary', 'unsharded', { reasons: ['state_function'] });
pg.add("SELECT t.oid, t.typname FROM pg_catalog.pg_type t WHERE t.typname IN ('hstore', 'geometry')", 'read', 'replica', 'unsharded');
pg.add('SELECT pg_backend_pid()', 'read', 'primary', 'unsharded');
pg.add("select * from pg_stat_activity where state = 'active'", 'read', 'replica', 'unsharded', { tables: ['pg_stat_activity'] });
pg.add(
  "SELECT c.relname, pg_size_pretty(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 10",
  'read',
  'replica',
  'unsharded',
);
pg.add("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name", 'read', 'replica', 'unsharded');
pg.add(
  'SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
  'read',
  'replica',
  'unsharded',
  { params: ['public', 'User'] },
);
pg.add("SET application_name = 'pgAdmin 4 - DB:app'", 'session_state', 'primary', 'unsharded', { session: 'pin' });
pg.add('SELECT pg_cancel_backend(123)', 'read', 'primary', 'unsharded', { reasons: ['side_effect_function'] });
pg.add('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', 'read', 'primary', 'unsharded', { params: ['app'] });
pg.add(
  'SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum',
  'read',
  'replica',
  'unsharded',
  { params: ['"User"'] },
);
pg.add('SELECT current_setting(\'server_version_num\')', 'read', 'replica', 'unsharded');

export const GUI = [...my.list, ...pg.list];
