#!/usr/bin/env node
// Long-running fuzz of libs/sql: the same properties as src/fuzz.spec.ts with many more runs.
// Usage: node tools/bench/sql/fuzz.cjs [--runs N] [--seed S]. Exits 1 with the counterexample on failure.
'use strict';
require('./ts-register.cjs');
const fc = require('fast-check');
const { DbproxyError } = require('../../../libs/util/src/index.ts');
const { sqlish } = require('../../../libs/sql/src/testing/arbitraries.ts');
const { SqlRouter, tokenize } = require('../../../libs/sql/src/index.ts');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const runs = arg('--runs', 200000);
const seed = arg('--seed', Date.now() % 2 ** 31);
const rules = [
  { table: 'users', column: 'id', map: { kind: 'hash', shards: ['s0', 's1'] } },
  { table: 'orders', column: 'user_id', map: { kind: 'range', ranges: [{ to: 0n, shard: 's0' }, { from: 0n, shard: 's1' }] } },
];
const params = fc.array(fc.oneof(fc.integer(), fc.bigInt(), fc.string(), fc.constant(null), fc.boolean(), fc.double()), { maxLength: 4 });

for (const dialect of ['mysql', 'postgresql']) {
  const router = new SqlRouter({ dialect, shardRules: rules, multiShard: 'reject', cacheSize: 256 });
  const started = Date.now();
  fc.assert(
    fc.property(sqlish, params, (sql, values) => {
      try {
        const tokens = tokenize(sql, dialect);
        let end = 0;
        for (const t of tokens) {
          if (t.start < end || t.end <= t.start || t.end > sql.length) throw new Error(`bad token ${JSON.stringify(t)}`);
          end = t.end;
        }
      } catch (err) {
        if (!(err instanceof DbproxyError) || err.code !== 'DBP_ERR_SQL_UNTERMINATED') throw err;
      }
      const first = router.route(sql, values);
      const again = router.route(sql, values);
      if (first.fingerprint.text !== again.fingerprint.text || first.classification.family !== again.classification.family) {
        throw new Error('routing the same statement twice disagreed');
      }
      if (!first.classification.replicaSafe && first.classification.unsafeReasons.length === 0) throw new Error('unsafe without a reason');
      const prepared = router.prepare(sql);
      router.routePrepared(prepared, values);
    }),
    { numRuns: runs, seed },
  );
  const stats = router.stats();
  console.log(`${dialect}: ${runs} inputs in ${((Date.now() - started) / 1000).toFixed(1)} s, seed ${seed}; cache ${JSON.stringify({ hits: stats.hits, misses: stats.misses, parses: stats.parses, parseFailures: stats.parseFailures })}`);
}
