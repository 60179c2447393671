// Fuzzing: any input tokenizes into ordered in-bounds tokens or a typed error, and routing never throws.
import fc from 'fast-check';
import { DbproxyError } from '@dbproxy/util';
import { sqlish } from './testing/arbitraries';
import { Fingerprinter } from './fingerprint';
import { SqlRouter } from './router';
import { tokenize } from './tokenize';
import type { Dialect } from './tokenizer';

const RULES = [
  { table: 'users', column: 'id', map: { kind: 'hash' as const, shards: ['s0', 's1'] } },
  { table: 'orders', column: 'user_id', map: { kind: 'value' as const, values: { '1': 's0' }, defaultShard: 's1' } },
];

describe.each(['mysql', 'postgresql'] as const)('fuzz (%s)', (dialect: Dialect) => {
  it('tokenizes into ordered, in-bounds tokens or throws only DBP_ERR_SQL_UNTERMINATED', () => {
    fc.assert(
      fc.property(sqlish, (sql) => {
        let tokens;
        try {
          tokens = tokenize(sql, dialect);
        } catch (err) {
          expect(err).toBeInstanceOf(DbproxyError);
          expect((err as DbproxyError).code).toBe('DBP_ERR_SQL_UNTERMINATED');
          return;
        }
        let previousEnd = 0;
        for (const t of tokens) {
          expect(t.start).toBeGreaterThanOrEqual(previousEnd);
          expect(t.end).toBeGreaterThan(t.start);
          expect(t.end).toBeLessThanOrEqual(sql.length);
          previousEnd = t.end;
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('routes anything without throwing, and the same way twice', () => {
    const router = new SqlRouter({ dialect, shardRules: RULES, multiShard: 'reject', cacheSize: 32 });
    fc.assert(
      fc.property(sqlish, fc.array(fc.oneof(fc.integer(), fc.string(), fc.constant(null)), { maxLength: 3 }), (sql, params) => {
        const first = router.route(sql, params);
        const second = router.route(sql, params);
        expect(second.fingerprint).toEqual(first.fingerprint);
        expect(second.classification).toEqual(first.classification);
        expect(second.decision.kind).toBe(first.decision.kind);
        if (!first.classification.replicaSafe) expect(first.classification.unsafeReasons.length).toBeGreaterThan(0);
      }),
      { numRuns: 1500 },
    );
    expect(router.stats().evictions).toBeGreaterThan(0);
  });

  it('fingerprints its own output to itself', () => {
    const fingerprinter = new Fingerprinter(dialect);
    fc.assert(
      fc.property(sqlish, (sql) => {
        const scan = fingerprinter.run(sql);
        if (scan.unterminated !== undefined) return;
        const once = scan.out.toString();
        if (once.includes('?+')) return; // a collapsed list reads back as `? +`
        if (dialect === 'postgresql' && once.includes('?')) return; // a slot after an operand reads back as a jsonb operator
        expect(fingerprinter.run(once).out.toString()).toBe(once);
      }),
      { numRuns: 1500 },
    );
  });
});

describe('linear time on adversarial input', () => {
  const big = 200_000;
  it.each([
    ['dollar tags', '$a$' + '$a '.repeat(big / 3)],
    ['nested comment openers', '/*'.repeat(big / 2)],
    ['quotes', "'" + "''".repeat(big / 2)],
    ['backslashes', "'" + '\\'.repeat(big)],
    ['long IN list', `SELECT * FROM users WHERE id IN (${'1,'.repeat(big / 2)}1)`],
    ['many rows', `INSERT INTO orders (user_id, total) VALUES ${'(1, 2),'.repeat(big / 7)}(1, 2)`],
  ])('%s', (_name, sql) => {
    const router = new SqlRouter({ dialect: 'postgresql', shardRules: RULES, multiShard: 'reject', cacheSize: 4 });
    const started = process.hrtime.bigint();
    for (const dialect of ['mysql', 'postgresql'] as const) new Fingerprinter(dialect).run(sql);
    router.route(sql);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(ms).toBeLessThan(15000); // generous for a loaded machine; a quadratic scan of 200k characters takes hours
  });
});
