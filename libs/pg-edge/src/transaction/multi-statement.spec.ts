// splitStatements / statementRoutes: one route per statement of a simple query, split where PostgreSQL splits.
import { SqlRouter } from '@dbproxy/sql';
import { splitStatements, statementRoutes } from './multi-statement';

const router = new SqlRouter({ dialect: 'postgresql', shardRules: [], multiShard: 'reject', cacheSize: 100 });

describe('splitStatements', () => {
  it('splits at top-level semicolons only', () => {
    expect(splitStatements("SELECT 'a;b'; SELECT $$x;y$$; SELECT \"c;d\" FROM t /* ; */")).toEqual(["SELECT 'a;b'", ' SELECT $$x;y$$', ' SELECT "c;d" FROM t /* ; */']);
    expect(splitStatements('SELECT 1;; ;-- done\n')).toEqual(['SELECT 1']);
  });

  it('leaves an unterminated text whole', () => {
    expect(splitStatements("SELECT 'a; SELECT 2")).toBeUndefined();
  });
});

describe('statementRoutes', () => {
  it('routes each statement of a batch, and a single statement as it is', () => {
    const whole = router.route('SELECT 1; UPDATE t SET a = 1');
    expect(statementRoutes(router, 'SELECT 1; UPDATE t SET a = 1', whole).map((r) => r.classification.family)).toEqual(['read', 'write']);
    const one = router.route('SELECT 1;');
    expect(statementRoutes(router, 'SELECT 1;', one)).toEqual([one]);
  });
});
