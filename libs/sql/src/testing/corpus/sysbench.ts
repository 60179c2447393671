// sysbench oltp_* statements (oltp_common.lua, bulk_insert.lua, select_random_*.lua), MySQL and PostgreSQL drivers.
import { cases } from './types';

const my = cases('mysql', 'sysbench');
// Point and range reads (oltp_read_only / oltp_read_write). sbtest1 is sharded by id (hash mod 4).
my.add('SELECT c FROM sbtest1 WHERE id=5', 'read', 'replica', ['s1'], { keys: [5], tables: ['sbtest1'] });
my.add('SELECT c FROM sbtest1 WHERE id=42', 'read', 'replica', ['s2'], { keys: [42] });
my.add('SELECT c FROM sbtest1 WHERE id=?', 'read', 'replica', ['s3'], { keys: [7], params: [7] });
my.add('SELECT c FROM sbtest1 WHERE id BETWEEN 5015 AND 5114', 'read', 'replica', 'all', { tables: ['sbtest1'] });
my.add('SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 4998 AND 5097', 'read', 'replica', 'all');
my.add('SELECT c FROM sbtest1 WHERE id BETWEEN 5010 AND 5109 ORDER BY c', 'read', 'replica', 'all');
my.add('SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 4980 AND 5079 ORDER BY c', 'read', 'replica', 'all');
my.add('SELECT c FROM sbtest2 WHERE id=5', 'read', 'replica', 'unsharded', { tables: ['sbtest2'] });
my.add('SELECT c FROM sbtest2 WHERE id BETWEEN 1 AND 100', 'read', 'replica', 'unsharded');
// Writes.
my.add('UPDATE sbtest1 SET k=k+1 WHERE id=5003', 'write', 'primary', ['s3'], { keys: [5003], tables: ['sbtest1'] });
my.add(
  "UPDATE sbtest1 SET c='83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330' WHERE id=4990",
  'write',
  'primary',
  ['s2'],
  { keys: [4990] },
);
my.add('DELETE FROM sbtest1 WHERE id=5007', 'write', 'primary', ['s3'], { keys: [5007] });
my.add(
  "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5007, 4997, '12341112211-71226442398-75436862227-16231548357-52340296416-45219181618-36429307064-91584426513-68155216193-85787542404', '22195207048-70116052123-74140395089-76317954521-98694025897')",
  'write',
  'primary',
  ['s3'],
  { keys: [5007], tables: ['sbtest1'] },
);
my.add('INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)', 'write', 'primary', ['s0'], { keys: [8], params: [8, 1, 'c', 'pad'] });
my.add('BEGIN', 'transaction', 'primary', 'unsharded', { tx: 'begin' });
my.add('COMMIT', 'transaction', 'primary', 'unsharded', { tx: 'commit' });
// select_random_points / select_random_ranges: k is not the shard column.
my.add('SELECT id, k, c, pad FROM sbtest1 WHERE k IN (4993, 5002, 5011, 4987, 5020, 5001, 5000, 4999, 4998, 5004)', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add('SELECT count(k) FROM sbtest1 WHERE k BETWEEN 4996 AND 5001 OR k BETWEEN 5003 AND 5008', 'read', 'replica', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add('SELECT id, k, c, pad FROM sbtest2 WHERE k IN (1, 2, 3)', 'read', 'replica', 'unsharded');
// Preparation (oltp_common.lua prepare) and bulk_insert.lua.
my.add(
  "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */",
  'ddl',
  'primary',
  'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED',
  { tx: 'implicit_commit' },
);
my.add("INSERT INTO sbtest1(k, c, pad) VALUES(4979, 'a', 'b'),(4980, 'c', 'd')", 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_KEY_MISSING');
my.add('CREATE INDEX k_1 ON sbtest1(k)', 'ddl', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
my.add("INSERT INTO sbtest1 VALUES(1, 4979, 'a', 'b'),(2, 4980, 'c', 'd')", 'write', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
my.add("INSERT INTO sbtest2 VALUES(1, 4979, 'a', 'b'),(2, 4980, 'c', 'd')", 'write', 'primary', 'unsharded', { tables: ['sbtest2'] });
my.add('DROP TABLE IF EXISTS sbtest2', 'ddl', 'primary', 'unsharded', { tx: 'implicit_commit' });
my.add('ANALYZE TABLE sbtest1', 'ddl', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED');
my.add('SELECT VERSION()', 'read', 'replica', 'unsharded');
my.add("SHOW VARIABLES LIKE 'version_comment'", 'utility', 'primary', 'unsharded');

const pg = cases('postgresql', 'sysbench');
pg.add('SELECT c FROM sbtest1 WHERE id=5', 'read', 'replica', 'unsharded');
pg.add('SELECT c FROM sbtest1 WHERE id=$1', 'read', 'replica', 'unsharded', { params: [5] });
pg.add('UPDATE sbtest1 SET k=k+1 WHERE id=$1', 'write', 'primary', 'unsharded', { params: [5] });
pg.add('SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN $1 AND $2', 'read', 'replica', 'unsharded', { params: [1, 100] });

export const SYSBENCH = [...my.list, ...pg.list];
