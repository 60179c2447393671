// Fingerprints: normalized text, collapsed lists and rows, literal slots, comment tags, statement count.
import { Fingerprinter } from './fingerprint';
import type { Dialect } from './tokenizer';

const fp = (sql: string, dialect: Dialect = 'mysql'): string => new Fingerprinter(dialect).run(sql).out.toString();

describe('Fingerprinter', () => {
  it('replaces literals with ? and normalizes whitespace and keyword case', () => {
    expect(fp("select  c\n\tFROM sbtest1 where id=42 and name = 'x' LIMIT 10")).toBe('SELECT c FROM sbtest1 WHERE id = ? AND name = ? LIMIT ?');
    expect(fp('SELECT * FROM t WHERE a = -5 AND b = 1.5e3 AND c = 0x1F AND d = X\'AB\' AND e = b\'01\'')).toBe(
      'SELECT * FROM t WHERE a = ? AND b = ? AND c = ? AND d = ? AND e = ?',
    );
  });

  it('keeps MySQL identifier case and folds unquoted PostgreSQL names', () => {
    expect(fp('SELECT Name FROM Users')).toBe('SELECT Name FROM Users');
    expect(fp('SELECT Name FROM Users WHERE "Mixed" = 1', 'postgresql')).toBe('SELECT name FROM users WHERE "Mixed" = ?');
  });

  it('drops comments, keeps executable comment content', () => {
    expect(fp('SELECT /* hi */ 1 -- tail\n FROM t # more')).toBe('SELECT ? FROM t');
    expect(fp('/*!40101 SET NAMES utf8 */')).toBe('SET NAMES utf8');
  });

  it('collapses literal IN lists of any length, but not lists with expressions', () => {
    expect(fp('SELECT * FROM t WHERE id IN (1)')).toBe(fp('SELECT * FROM t WHERE id IN (1, 2, 3, ?)'));
    expect(fp('SELECT * FROM t WHERE id IN (1, 2)')).toBe('SELECT * FROM t WHERE id IN (?+)');
    expect(fp('SELECT * FROM t WHERE id NOT IN (1, a)')).toBe('SELECT * FROM t WHERE id NOT IN (?, a)');
    expect(fp('SELECT * FROM t WHERE id IN (SELECT 1)')).toBe('SELECT * FROM t WHERE id IN (SELECT ?)');
  });

  it('reads a word after a dot as a name part, however the dotted name is spaced', () => {
    expect(fp('SELECT a\r.IN (1)')).toBe(fp('SELECT a.IN (1)'));
    expect(fp('SELECT a . IN (1)')).toBe('SELECT a.IN(?)');
    expect(fp('SELECT t . values (1)')).toBe('SELECT t.VALUES(?)');
  });

  it('collapses identical VALUES rows and keeps differing ones', () => {
    expect(fp("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')")).toBe('INSERT INTO t(a, b) VALUES (?, ?)');
    expect(fp("INSERT INTO t (a, b) VALUES (1, 'x')")).toBe('INSERT INTO t(a, b) VALUES (?, ?)');
    expect(fp('INSERT INTO t (a, b) VALUES (1, 2), (3, NOW())')).toBe('INSERT INTO t(a, b) VALUES (?, ?), (?, NOW())');
    expect(fp('INSERT INTO t VALUES (1, 2), (3, 4) ON DUPLICATE KEY UPDATE b = VALUES(b)')).toBe('INSERT INTO t VALUES (?, ?) ON DUPLICATE KEY UPDATE b = VALUES (b)');
  });

  it('records where every literal is, and which literals a collapsed slot covers', () => {
    const sql = "INSERT INTO t (a, b) VALUES (1, 'x'), (22, 'y')";
    const scan = new Fingerprinter('mysql').run(sql);
    const raw = Array.from({ length: scan.rawInfo.length }, (_, i) => sql.slice(scan.rawStart.data[i], scan.rawEnd.data[i]));
    expect(raw).toEqual(['1', "'x'", '22', "'y'"]);
    expect(scan.slotCount).toBe(2);
    expect(scan.groupRows.toArray()).toEqual([2]);
    expect(scan.groupRawPerRow.toArray()).toEqual([2]);
    expect([scan.rowSrcStart.toArray(), scan.rowSrcEnd.toArray()]).toEqual([
      [28, 38],
      [36, 47],
    ]);
  });

  it('numbers placeholders: ? by position, $n by number', () => {
    const mysql = new Fingerprinter('mysql').run('SELECT ? + ?, ?');
    expect([0, 1, 2].map((i) => mysql.rawParam(i))).toEqual([0, 1, 2]);
    const pg = new Fingerprinter('postgresql').run('SELECT $2 + $1');
    expect([0, 1].map((i) => pg.rawParam(i))).toEqual([1, 0]);
  });

  it('drops trailing semicolons and counts statements', () => {
    const f = new Fingerprinter('mysql');
    expect(f.run('SELECT 1;;').statementCount).toBe(1);
    expect(f.scan.out.toString()).toBe('SELECT ?');
    expect(f.run('SELECT 1; SELECT 2').statementCount).toBe(2);
    expect(f.run(' ; ').statementCount).toBe(0);
  });

  it('reads sqlcommenter trace context and routing hints', () => {
    const scan = new Fingerprinter('mysql').run(
      "SELECT 1 /*traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',tracestate='congo%3Dt61rcWkgMzE',dbproxy_route='primary',dbproxy_shard='s%201'*/",
    );
    expect(scan.comments).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'congo=t61rcWkgMzE',
      hints: { route: 'primary', shard: 's 1' },
    });
  });

  it('ignores malformed trace context and unknown hint values', () => {
    const scan = new Fingerprinter('mysql').run("SELECT 1 /* traceparent='00-00000000000000000000000000000000-00f067aa0ba902b7-01', dbproxy_route='sideways' */");
    expect(scan.comments).toEqual({ traceparent: undefined, tracestate: undefined, hints: {} });
  });

  it('marks unterminated input and still produces a distinct fingerprint', () => {
    const scan = new Fingerprinter('mysql').run("SELECT 'abc");
    expect(scan.unterminated).toBe('string');
    expect(scan.out.toString()).toBe('SELECT <unterminated string>');
  });

  it('forgets the previous statement on each run', () => {
    const f = new Fingerprinter('mysql');
    f.run("/*dbproxy_shard='a'*/ INSERT INTO t VALUES (1), (2)");
    const scan = f.run('SELECT 1');
    expect(scan.comments.hints).toEqual({});
    expect(scan.groupRows.length).toBe(0);
    expect(scan.rawInfo.length).toBe(1);
  });
});
