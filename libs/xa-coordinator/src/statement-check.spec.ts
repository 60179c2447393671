import { assertSingleDml } from './statement-check';

describe('the XA statement allowlist', () => {
  it.each(['INSERT INTO t VALUES (1)', ' /* c */ update t set a = 1;', 'DELETE FROM t WHERE a = 1', "REPLACE INTO t VALUES ('x;y')"])('accepts %s', (s) => {
    expect(() => assertSingleDml(s)).not.toThrow();
  });
  it.each(['SELECT 1', 'INSERT INTO t VALUES (1); DELETE FROM t', 'COMMIT', "INSERT INTO t VALUES ('x", 'XA START 1'])('refuses %s', (s) => {
    expect(() => assertSingleDml(s)).toThrow(/DML|INSERT, UPDATE/);
  });
});
