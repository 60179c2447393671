// Which statements a fanout copies: DML writing its table, in every form the classifier reads.
import { SqlRouter } from '@dbproxy/sql';
import { matchingRules, type FanoutRule } from './fanout-rules';

const router = new SqlRouter({ dialect: 'mysql', shardRules: [], multiShard: 'reject', cacheSize: 100, allowedFunctions: [], maxParseTokens: 200 });
const rule = (table: string, schema: string | null = null): FanoutRule => ({ name: table, schema, table, targets: ['s1'], mode: 'best_effort', concurrency: 1, timeoutMs: 1000, maxTransactionBytes: 1000 });
const audit = rule('audit_log');
const matches = (sql: string, rules: FanoutRule[] = [audit], schema: string | null = 'appdb') => matchingRules(rules, router.route(sql).classification, schema).rules.map((r) => r.name);
const ambiguous = (sql: string) => matchingRules([audit], router.route(sql).classification, 'appdb').ambiguous.map((r) => r.name);

describe('fanout rules', () => {
  it.each([
    "INSERT INTO audit_log VALUES (1, 'a')",
    "insert into `audit_log` (id, v) values (1, 'a')",
    "INSERT INTO audit_log SET id = 1, v = 'x'",
    "INSERT INTO audit_log VALUES (1, 'a') ON DUPLICATE KEY UPDATE v = VALUES(v)",
    "INSERT IGNORE INTO audit_log VALUES (1, 'a'), (2, 'b')",
    "REPLACE INTO audit_log VALUES (1, 'a')",
    "UPDATE audit_log SET v = 'b' WHERE id = 1",
    'DELETE FROM audit_log WHERE id = 1',
    'INSERT INTO audit_log SELECT * FROM other',
    "/* app */ INSERT INTO appdb.audit_log VALUES (1, 'a')",
    'INSERT INTO audit_log VALUES (?, ?)',
  ])('copies %s', (sql) => {
    expect(matches(sql)).toEqual(['audit_log']);
  });

  it.each(["INSERT INTO other VALUES (1, 'a')", 'INSERT INTO other SELECT * FROM audit_log', 'SELECT * FROM audit_log', 'UPDATE other SET v = 1', 'CREATE TABLE audit_log2 (id INT)', 'TRUNCATE audit_log'])(
    'does not copy %s',
    (sql) => {
      expect(matches(sql)).toEqual([]);
    },
  );

  it('matches schema-qualified tables against the statement or the session database', () => {
    const qualified = rule('audit_log', 'appdb');
    expect(matches("INSERT INTO audit_log VALUES (1, 'a')", [qualified], 'appdb')).toEqual(['audit_log']);
    expect(matches("INSERT INTO audit_log VALUES (1, 'a')", [qualified], 'elsewhere')).toEqual([]);
    expect(matches("INSERT INTO appdb.audit_log VALUES (1, 'a')", [qualified], null)).toEqual(['audit_log']);
    expect(matches("INSERT INTO other.audit_log VALUES (1, 'a')", [qualified], 'appdb')).toEqual([]);
  });

  it.each([
    'UPDATE audit_log a JOIN other o ON o.id = a.id SET a.v = o.v',
    'UPDATE audit_log a JOIN other o ON o.id = a.id SET o.v = a.v',
    'DELETE audit_log FROM audit_log JOIN other ON other.id = audit_log.id',
    'DELETE a FROM audit_log a JOIN other o ON o.id = a.id', 'UPDATE other o JOIN audit_log a ON o.id = a.id SET a.v = o.v', 'UPDATE other JOIN audit_log ON other.id = audit_log.id SET other.v = 1'])(
    'finds %s ambiguous (refused: which table it writes is not known for sure)',
    (sql) => {
      expect(ambiguous(sql)).toEqual(['audit_log']);
      expect(matches(sql)).toEqual([]);
    },
  );

  it('finds single-table and INSERT ... SELECT forms unambiguous', () => {
    expect(ambiguous('DELETE FROM audit_log WHERE id = 1')).toEqual([]);
    expect(ambiguous('INSERT INTO other SELECT * FROM audit_log')).toEqual([]);
    expect(ambiguous('UPDATE other SET v = 1')).toEqual([]);
  });

  it('sees the fanout table inside a multi-statement request (which the session then refuses)', () => {
    expect(matches("SELECT 1; INSERT INTO audit_log VALUES (1, 'a')")).toEqual(['audit_log']);
  });
});
