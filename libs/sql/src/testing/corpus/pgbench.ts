// pgbench: the built-in TPC-B-like and select-only scripts (simple and prepared), and its initialization.
import { cases } from './types';

const pg = cases('postgresql', 'pgbench');
// tpcb-like, -M simple: pgbench substitutes the variables into the text. pgbench_accounts is range-sharded on aid.
pg.add('BEGIN;', 'transaction', 'primary', 'unsharded', { tx: 'begin' });
pg.add('UPDATE pgbench_accounts SET abalance = abalance + -2890 WHERE aid = 23411;', 'write', 'primary', ['pa'], { keys: [23411], tables: ['pgbench_accounts'] });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = 23411;', 'read', 'replica', ['pa'], { keys: [23411] });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = 77820', 'read', 'replica', ['pb'], { keys: [77820] });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = 50001', 'read', 'replica', ['pb'], { keys: [50001] });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = 50000', 'read', 'replica', ['pa'], { keys: [50000] });
pg.add('UPDATE pgbench_tellers SET tbalance = tbalance + -2890 WHERE tid = 7;', 'write', 'primary', 'unsharded', { tables: ['pgbench_tellers'] });
pg.add('UPDATE pgbench_branches SET bbalance = bbalance + -2890 WHERE bid = 1;', 'write', 'primary', 'unsharded');
pg.add(
  'INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (7, 1, 23411, -2890, CURRENT_TIMESTAMP);',
  'write',
  'primary',
  'unsharded',
  { tables: ['pgbench_history'] },
);
pg.add('END;', 'transaction', 'primary', 'unsharded', { tx: 'commit' });
// -M prepared / extended: the same statements with $n placeholders, bound per execution.
pg.add('UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;', 'write', 'primary', ['pb'], { keys: [99000], params: [-10, 99000] });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = $1;', 'read', 'replica', ['pa'], { keys: [12], params: [12] });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = $1;', 'read', 'replica', ['pb'], { keys: ['60000'], params: ['60000'] });
pg.add('UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;', 'write', 'primary', 'unsharded', { params: [1, 2] });
pg.add('INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);', 'write', 'primary', 'unsharded', { params: [1, 1, 1, 1] });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = $1;', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_INVALID', { params: [null] });
// simple-update and select-only variants.
pg.add('BEGIN ISOLATION LEVEL REPEATABLE READ', 'transaction', 'primary', 'unsharded', { tx: 'begin' });
pg.add('SELECT abalance FROM pgbench_accounts WHERE aid = 1', 'read', 'replica', ['pa'], { keys: [1] });
// Initialization (-i) and its catalog probes.
pg.add('drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers', 'ddl', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
pg.add('create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))', 'ddl', 'primary', 'unsharded', { tx: 'none' });
pg.add('create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)', 'ddl', 'primary', 'unsharded');
pg.add('truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers', 'ddl', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
pg.add('copy pgbench_accounts from stdin with (freeze on)', 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
pg.add('copy pgbench_branches from stdin', 'write', 'primary', 'unsharded');
pg.add('vacuum analyze pgbench_branches', 'ddl', 'primary', 'unsharded');
pg.add('alter table pgbench_branches add primary key (bid)', 'ddl', 'primary', 'unsharded');
pg.add('alter table pgbench_accounts add primary key (aid)', 'ddl', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
pg.add('select count(*) from pgbench_branches', 'read', 'replica', 'unsharded', { tables: ['pgbench_branches'] });
pg.add('select count(*) from pgbench_accounts', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
pg.add(
  "select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1",
  'read',
  'replica',
  'unsharded',
  { tables: ['pg_catalog.pg_class', 'pg_catalog.pg_namespace', 'pg_catalog.pg_partitioned_table', 'pg_catalog.pg_inherits'] },
);
pg.add("select set_config('search_path', '', false)", 'read', 'primary', 'unsharded', { session: 'pin', reasons: ['side_effect_function'] });
pg.add('SELECT pg_catalog.set_config(\'search_path\', \'\', false);', 'read', 'primary', 'unsharded', { session: 'pin' });

export const PGBENCH = pg.list;
