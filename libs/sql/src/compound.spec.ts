// Compound statements (stored program bodies, BEGIN NOT ATOMIC) count as one statement; real batches still count as several.
import { SqlRouter } from './router';

const mysql = (): SqlRouter => new SqlRouter({ dialect: 'mysql', shardRules: [], multiShard: 'reject', cacheSize: 64 });
const classify = (sql: string) => mysql().route(sql).classification;

const PROCEDURE = `CREATE DEFINER = 'app'@'%' PROCEDURE add_row(IN n INT)
BEGIN
  DECLARE done INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET done = 1;
  outer_loop: LOOP
    IF n > 10 THEN LEAVE outer_loop; ELSEIF n < 0 THEN SET n = 0; ELSE SET n = n + 1; END IF;
    CASE n WHEN 1 THEN SELECT IF(n = 1, 'a', 'b'); ELSE BEGIN SELECT CASE WHEN n > 2 THEN 1 ELSE 0 END; END; END CASE;
    WHILE n < 5 DO SET n = n + 1; END WHILE;
    REPEAT SET n = n - 1; UNTIL n <= 0 END REPEAT;
    SELECT REPEAT('x', 3), NEXTVAL(s), GET_LOCK('l', 1), @v;
    CREATE TABLE IF NOT EXISTS tmp_x (a INT);
    DROP TABLE IF EXISTS tmp_x;
    IF NOT EXISTS (SELECT 1 FROM t) THEN INSERT INTO t VALUES (n); END IF;
  END LOOP outer_loop;
  INSERT INTO log VALUES (n);
END`;

describe('compound statements (MySQL)', () => {
  it.each([
    ['a procedure with nested blocks, loops, labels and handlers', PROCEDURE],
    ['a procedure with a trailing delimiter', `${PROCEDURE};`],
    ['a trigger', 'CREATE TRIGGER trg BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = NEW.a + 1; INSERT INTO log VALUES (NEW.a); END'],
    ['a trigger body without BEGIN', 'CREATE TRIGGER trg AFTER UPDATE ON t FOR EACH ROW IF NEW.a > 1 THEN INSERT INTO log VALUES (1); END IF'],
    ['an event', 'CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DO BEGIN DELETE FROM log WHERE a < 0; INSERT INTO log VALUES (2); END'],
    ['an altered event', 'ALTER EVENT ev DO BEGIN DELETE FROM log; INSERT INTO log VALUES (3); END'],
    ['a function', 'CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC BEGIN DECLARE y INT; SET y = x * 2; RETURN y; END'],
    ['CREATE OR REPLACE AGGREGATE FUNCTION', 'CREATE OR REPLACE AGGREGATE FUNCTION agg(x INT) RETURNS INT BEGIN DECLARE s INT DEFAULT 0; LOOP FETCH GROUP NEXT ROW; SET s = s + x; END LOOP; END'],
    ['a procedure body that is an IF statement', 'CREATE PROCEDURE p() IF (1 > 0) THEN SELECT 1; ELSE SELECT 2; END IF'],
  ])('%s is one DDL statement for the primary', (_name, sql) => {
    const c = classify(sql);
    expect(c).toMatchObject({ statementCount: 1, family: 'ddl', replicaSafe: false, transaction: 'implicit_commit', session: { kind: 'none' } });
    expect(c.unsafeReasons.map((r) => r.code)).toEqual(['not_a_read']); // the body runs later: its functions and variables say nothing now
  });

  it('counts BEGIN NOT ATOMIC ... END as one write that pins and is not analyzed', () => {
    const c = classify('BEGIN NOT ATOMIC DECLARE x INT DEFAULT 1; IF x THEN SELECT 1; END IF; INSERT INTO t VALUES (x); END');
    expect(c).toMatchObject({ statementCount: 1, family: 'write', replicaSafe: false, session: { kind: 'pin' } });
    expect(c.unsafeReasons.map((r) => r.code)).toContain('compound_statement');
  });

  it('keeps plain BEGIN a transaction', () => {
    expect(classify('BEGIN')).toMatchObject({ family: 'transaction', transaction: 'begin', statementCount: 1 });
    expect(classify('BEGIN WORK')).toMatchObject({ family: 'transaction', transaction: 'begin', statementCount: 1 });
  });

  it.each([
    ['a body without BEGIN ends at its semicolon', 'CREATE PROCEDURE p() SELECT 1; DROP TABLE t', 2],
    ['statements after the END are separate', 'CREATE PROCEDURE p() BEGIN SELECT 1; END; DROP TABLE t', 2],
    ['BEGIN; ... is a transaction batch', 'BEGIN; INSERT INTO t VALUES (1); COMMIT', 3],
    ['CASE expressions do not join statements', 'SELECT CASE WHEN a THEN 1 ELSE 2 END FROM t; SELECT 2', 2],
    ['IF() and IF EXISTS do not open blocks', 'SELECT IF(a, 1, 2) FROM t; DROP TABLE IF EXISTS t; SELECT 3', 3],
    ['a CREATE TABLE with END-less words is not compound', 'CREATE TABLE t (a INT); SELECT 1', 2],
  ])('%s', (_name, sql, count) => {
    const c = classify(sql);
    expect(c.statementCount).toBe(count);
    expect(c.replicaSafe).toBe(false);
  });

  it('leaves PostgreSQL splitting as it was (BEGIN; ... is a batch there)', () => {
    const pg = new SqlRouter({ dialect: 'postgresql', shardRules: [], multiShard: 'reject', cacheSize: 8 });
    expect(pg.route('BEGIN; SELECT 1; END').classification.statementCount).toBe(3);
  });
});

describe('MariaDB sequence expressions', () => {
  it.each(['SELECT NEXT VALUE FOR s', 'SELECT PREVIOUS VALUE FOR s', 'SELECT NEXTVAL(s)', 'SELECT SETVAL(s, 10)'])('%s is never replica-safe', (sql) => {
    const c = classify(sql);
    expect(c.replicaSafe).toBe(false);
    expect(c.unsafeReasons.map((r) => r.code)).toContain('sequence_function');
  });
});
