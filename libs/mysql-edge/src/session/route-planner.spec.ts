// The routing rules of spec 000 on real classifications: replica reads, primary writes, pins,
// the read-after-write window, the read-only listener, multi-statements, and reset decisions.
import { SqlRouter } from '@dbproxy/sql';
import { leavesUntrackedState, planStatement, planCommand, type PlanContext } from './route-planner';

const router = new SqlRouter({ dialect: 'mysql', shardRules: [], multiShard: 'reject', cacheSize: 100 });
const rw: PlanContext = { listener: 'read_write', readAfterWrite: false, defaultShard: 'default', multiStatements: 'reject' };
const plan = (sql: string, ctx: Partial<PlanContext> = {}) => planStatement(router.route(sql), { ...rw, ...ctx });

describe('planStatement', () => {
  it.each([
    ['SELECT c FROM sbtest1 WHERE id = 1', 'replica', 'replica', null],
    ['SELECT * FROM t FOR UPDATE', 'primary', 'primary', null],
    ['SELECT LAST_INSERT_ID()', 'primary', 'primary', null],
    ['INSERT INTO t VALUES (1)', 'primary', 'primary', null],
    ['BEGIN', 'primary', 'primary', 'transaction'],
    ['START TRANSACTION', 'primary', 'primary', 'transaction'],
    ['SET autocommit = 0', 'primary', 'primary', 'autocommit'],
    ["SET @x = 'a'", 'primary', 'primary', 'session_state'],
    ['CREATE TEMPORARY TABLE t (a INT)', 'primary', 'primary', 'session_state'],
    ['SET NAMES utf8mb4', 'primary', 'primary', null],
  ])('%s → %s (%s), pin %s', (sql, role, label, pin) => {
    expect(plan(sql)).toMatchObject({ role, label, pin, shard: 'default' });
  });

  it('borrows from the reserved pool only to start a pin', () => {
    expect(plan('BEGIN')).toMatchObject({ reserved: true });
    expect(plan('UPDATE t SET a = 1')).toMatchObject({ reserved: false, write: true });
  });

  it('sends reads to the primary inside the read-after-write window', () => {
    expect(plan('SELECT a FROM t', { readAfterWrite: true })).toMatchObject({ role: 'primary', label: 'read_after_write' });
  });

  it('refuses writes on the read-only listener (1290) and keeps everything else on replicas', () => {
    const ro = { listener: 'read_only' as const };
    expect(plan('UPDATE t SET a = 1', ro)).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_READ_ONLY' });
    expect(plan('DROP TABLE t', ro)).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_READ_ONLY' });
    expect(plan('SELECT @@server_id', ro)).toMatchObject({ role: 'replica' });
    expect(plan('BEGIN', ro)).toMatchObject({ role: 'replica', pin: 'transaction', reserved: false });
  });

  const ro = { listener: 'read_only' as const };
  it.each([
    'SELECT * FROM t FOR UPDATE', 'SELECT * FROM t LOCK IN SHARE MODE', 'SELECT * FROM t FOR SHARE', 'SELECT NEXTVAL(s)', 'SELECT SETVAL(s, 5)',
    'SELECT NEXT VALUE FOR s', 'SELECT PREVIOUS VALUE FOR s', "SELECT GET_LOCK('a', 1)", "SELECT RELEASE_LOCK('a')", "DO GET_LOCK('a', 1)",
    'LOCK TABLES t READ', 'UNLOCK TABLES', 'HANDLER t OPEN', "XA START 'x'", 'XA RECOVER', 'SELECT my_fn(1)', 'SELECT a INTO @v FROM t',
    "SELECT a FROM t INTO OUTFILE '/tmp/x'", 'CALL p()', 'CREATE TEMPORARY TABLE t (a INT)', "PREPARE s FROM 'SELECT 1'", 'EXECUTE s',
    'SET sql_log_bin = 0', 'SET @@session.gtid_seq_no = 5', "SET @x = 1, `pseudo_thread_id` = 3", "SET @x = GET_LOCK('a', 1)", 'SET @s = NEXTVAL(s)',
    'SET STATEMENT max_statement_time = 1 FOR UPDATE t SET a = 1', 'START TRANSACTION READ WRITE', 'CHECK TABLE t', 'ANALYZE TABLE t',
    'FLUSH TABLES', 'SET GLOBAL max_connections = 5', 'SET @@global.max_connections = 5', 'SET @@GLOBAL.read_only = 0', 'BEGIN NOT ATOMIC SELECT 1; END', 'CREATE PROCEDURE p() BEGIN SELECT 1; END',
    'SELECT 1; SELECT 2', 'FOO BAR', 'IF 1 THEN SELECT 1; END IF',
  ])('refuses %s on the read-only listener with 1290', (sql) => {
    expect(plan(sql, { ...ro, multiStatements: 'primary' })).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_READ_ONLY', message: expect.stringMatching(/^The read-only listener runs only reads a replica may serve, not .+; use the read-write listener$/) });
  });

  it.each([
    ['SELECT a FROM t', null], ["SELECT a FROM t /*dbproxy_route='primary'*/", null], ['SELECT @x', null], ['SELECT LAST_INSERT_ID(), CONNECTION_ID()', null],
    ['BEGIN', 'transaction'], ['START TRANSACTION READ ONLY', 'transaction'], ['START TRANSACTION WITH CONSISTENT SNAPSHOT', 'transaction'], ['COMMIT', null],
    ['ROLLBACK', null], ['SAVEPOINT a', null], ['RELEASE SAVEPOINT a', null], ['ROLLBACK TO SAVEPOINT a', null], ['SET autocommit = 0', 'autocommit'],
    ['SET autocommit = 1', null], ['SET NAMES utf8mb4', null], ['SET CHARACTER SET utf8mb4', null], ['USE app', null],
    ["SET SESSION sql_mode = 'ANSI'", 'session_state'], ["SET @@SESSION.sql_mode = CONCAT(@@sql_mode, ',STRICT_TRANS_TABLES'), @@SESSION.wait_timeout = 100", 'session_state'],
    ['SET SESSION TRANSACTION READ ONLY', 'session_state'], ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'session_state'], ["SET @x = 'a'", 'session_state'],
    ['SET @id = LAST_INSERT_ID()', 'session_state'], ['SET time_zone = \'+00:00\'', 'session_state'], ['SET ROLE r', 'session_state'],
    ['SHOW TABLES', null], ['SHOW WARNINGS', null], ['DESCRIBE t', null], ['EXPLAIN SELECT a FROM t', null], ['HELP \'select\'', null],
  ])('runs %s on a replica from the read-only listener (pin %s)', (sql, pin) => {
    expect(plan(sql, { ...ro, multiStatements: 'primary' })).toMatchObject({ role: 'replica', label: 'replica', pin, reserved: false, write: false });
  });

  it('rejects multi-statement requests unless multi_statements = "primary"', () => {
    expect(plan('SELECT 1; SELECT 2')).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_MULTI_STATEMENT' });
    expect(plan('SELECT 1; SELECT 2', { multiStatements: 'primary' })).toMatchObject({ role: 'primary' });
  });
});

describe('planCommand', () => {
  it('serves metadata from a replica and schema changes from the primary', () => {
    expect(planCommand('metadata', rw)).toMatchObject({ role: 'replica' });
    expect(planCommand('schema', rw)).toMatchObject({ role: 'primary' });
    expect(planCommand('schema', { ...rw, listener: 'read_only' })).toMatchObject({ role: 'replica' });
  });
});

describe('leavesUntrackedState', () => {
  it.each([
    ['SELECT a FROM t', false],
    ['SELECT @@server_id', false],
    ['UPDATE t SET a = 1', false],
    ['BEGIN', false],
    ['COMMIT', false],
    ['CREATE TABLE x (a INT)', false],
    ['USE db', false],
    ['SET NAMES latin1', false],
    ["SET @x = 'a'", true],
    ['SELECT GET_LOCK("l", 1)', true],
    ['SELECT my_function(1)', true],
    ['CALL proc()', true],
    ['SET SESSION sql_mode = ""', true],
    ['CREATE TEMPORARY TABLE t (a INT)', true],
    ['PREPARE s FROM "SELECT 1"', true],
  ])('%s → %s', (sql, dirty) => {
    expect(leavesUntrackedState(router.route(sql).classification)).toBe(dirty);
  });
});

describe('pipelinable (pipeline_depth)', () => {
  it.each([
    ['SELECT c FROM sbtest1 WHERE id = 1', {}, true],
    ['SELECT a FROM t', { readAfterWrite: true }, true],
    ['SELECT a FROM t', { listener: 'read_only' as const }, true],
    ['SELECT * FROM t FOR UPDATE', {}, false],
    ['SELECT LAST_INSERT_ID()', {}, false],
    ['SELECT @x', {}, false],
    ['SELECT GET_LOCK(\'a\', 1)', {}, false],
    ['INSERT INTO t VALUES (1)', {}, false],
    ['BEGIN', {}, false],
    ['BEGIN', { listener: 'read_only' as const }, false],
    ['SET NAMES utf8mb4', {}, false],
  ])('%s (%j) → %s', (sql, ctx, pipelinable) => {
    expect((plan(sql, ctx) as { pipelinable?: boolean }).pipelinable === true).toBe(pipelinable);
  });
});
